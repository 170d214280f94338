import Foundation
import Testing

@testable import Depot

@Suite("JSONCoding")
struct JSONCodingTests {
    private struct Article: Codable, Equatable {
        var id: Int
        var title: String
    }

    private struct Stamped: Codable, Equatable {
        var authorId: Int
        var createdAt: Date
    }

    private static func data(_ text: String) -> Data { Data(text.utf8) }

    private static func decodingDetails<T: Decodable>(
        _ type: T.Type, _ text: String, coding: JSONCoding = .default, at keyPath: [String] = []
    ) -> DecodingFailure? {
        do {
            _ = try coding.decode(type, from: data(text), at: keyPath)
            return nil
        } catch {
            return error.decodingDetails
        }
    }

    @Test func decodesTheEntity() throws {
        let articles = try JSONCoding.default.decode(
            [Article].self, from: Self.data(#"[{"id":1,"title":"a"},{"id":2,"title":"b"}]"#))
        #expect(articles == [Article(id: 1, title: "a"), Article(id: 2, title: "b")])
    }

    @Test func aWrongFieldTypeNamesTheTypeAndThePath() throws {
        let failure = try #require(
            Self.decodingDetails([Article].self, #"[{"id":1,"title":"a"},{"id":2,"title":5}]"#))
        #expect(failure.type.contains("Article"))
        #expect(failure.type.contains("Array"))
        #expect(failure.codingPath == "[1].title")
    }

    @Test func aMissingKeyNamesTheKey() throws {
        let failure = try #require(Self.decodingDetails(Article.self, #"{"id":1}"#))
        #expect(failure.codingPath == "title")
        #expect(failure.description.contains("title"))
        let nested = try #require(
            Self.decodingDetails([Article].self, #"[{"id":1,"title":"a"},{"title":"b"}]"#))
        #expect(nested.codingPath == "[1].id")
    }

    @Test(arguments: [#"{"id":1,"title":"a"}"#, "<html>Oops</html>", ""])
    func aBodyOfAnotherShapeIsADecodingError(body: String) throws {
        let failure = try #require(Self.decodingDetails([Article].self, body))
        #expect(failure.codingPath == "(root)")
        #expect(!failure.description.isEmpty)
    }

    @Test func envelopeUnwrapsThePayload() throws {
        let coding = JSONCoding.default.envelope("data")
        #expect(coding.envelope == ["data"])
        let articles = try coding.decode(
            [Article].self, from: Self.data(#"{"data":[{"id":1,"title":"a"}],"meta":{}}"#))
        #expect(articles == [Article(id: 1, title: "a")])
        let failure = try #require(
            Self.decodingDetails(
                [Article].self, #"{"data":[{"id":1,"title":"a"},{"id":"2","title":"b"}]}"#, coding: coding))
        #expect(failure.codingPath == "data[1].id")
        let missing = try #require(Self.decodingDetails([Article].self, #"{"items":[]}"#, coding: coding))
        #expect(missing.codingPath == "data")
    }

    @Test func nestedEnvelopeAndKeyPath() throws {
        let coding = JSONCoding.default.envelope("response", "items")
        let body = #"{"response":{"items":{"results":[{"id":3,"title":"c"}],"count":1}}}"#
        let articles = try coding.decode([Article].self, from: Self.data(body), at: ["results"])
        #expect(articles == [Article(id: 3, title: "c")])
        let plain = try coding.decode(
            Article.self, from: Self.data(#"{"response":{"items":{"id":4,"title":"d"}}}"#))
        #expect(plain == Article(id: 4, title: "d"))
        let failure = try #require(
            Self.decodingDetails(
                Article.self, #"{"response":{"items":{"id":4,"title":null}}}"#, coding: coding))
        #expect(failure.codingPath == "response.items.title")
    }

    @Test func strategyCopiesLeaveTheDefaultAlone() throws {
        let custom = JSONCoding.default.dateStrategy(.iso8601).keyStrategy(.snakeCase).envelope("data")
        let snake = Self.data(#"{"data":{"author_id":7,"created_at":"2024-05-01T12:00:00Z"}}"#)
        let decoded = try custom.decode(Stamped.self, from: snake)
        #expect(decoded == Stamped(authorId: 7, createdAt: Date(timeIntervalSince1970: 1_714_564_800)))

        #expect(JSONCoding.default.envelope.isEmpty)
        let camel = Self.data(#"{"authorId":7,"createdAt":0}"#)
        let plain = try JSONCoding.default.decode(Stamped.self, from: camel)
        #expect(plain == Stamped(authorId: 7, createdAt: Date(timeIntervalSinceReferenceDate: 0)))
        #expect(Self.decodingDetails(Stamped.self, #"{"author_id":7,"created_at":0}"#) != nil)

        let encoded = try JSONCoding.default.encode(
            Stamped(authorId: 1, createdAt: Date(timeIntervalSinceReferenceDate: 5)))
        let object = try #require(try JSONSerialization.jsonObject(with: encoded) as? [String: Any])
        #expect(object["authorId"] as? Int == 1)
        #expect(object["createdAt"] as? Double == 5)
    }

    @Test(arguments: [JSONCoding.DateStrategy.secondsSince1970, .millisecondsSince1970, .iso8601])
    func dateStrategiesWorkBothWays(strategy: JSONCoding.DateStrategy) throws {
        let coding = JSONCoding.default.dateStrategy(strategy)
        let value = Stamped(authorId: 1, createdAt: Date(timeIntervalSince1970: 1_714_564_800))
        #expect(try coding.decode(Stamped.self, from: coding.encode(value)) == value)
    }

    @Test func anUnencodableValueIsAnInvalidRequest() {
        let error = #expect(throws: ServiceError.self) {
            try JSONCoding.default.encode(["ratio": Double.nan])
        }
        guard case .invalidRequest(let reason) = error else {
            Issue.record("expected invalidRequest, got \(String(describing: error))")
            return
        }
        #expect(!reason.isEmpty)
    }
}

@Suite("JSONCoding: strategies and envelopes together")
struct JSONCodingStrategyTests {
    private struct Item: Codable, Equatable {
        var itemId: Int
    }

    @Test func snakeCaseEnvelopeKeysAreFound() throws {
        let coding = JSONCoding.default.keyStrategy(.snakeCase).envelope("search_results", "page_items")
        let body = Data(#"{"search_results":{"page_items":[{"item_id":1}]}}"#.utf8)
        #expect(try coding.decode([Item].self, from: body) == [Item(itemId: 1)])
        let paged = JSONCoding.default.keyStrategy(.snakeCase)
        let envelope = Data(#"{"total_count":1,"result_list":[{"item_id":2}]}"#.utf8)
        #expect(try paged.decode([Item].self, from: envelope, at: ["result_list"]) == [Item(itemId: 2)])
    }

    @Test func strategyCopiesKeepTheOtherDecoderSettings() throws {
        let decoder = JSONDecoder()
        decoder.allowsJSON5 = true
        let coding = JSONCoding(decoder: decoder).dateStrategy(.iso8601).keyStrategy(.useDefaultKeys)
        #expect(coding.decoder.allowsJSON5)
        #expect(try coding.decode(Item.self, from: Data("{itemId: 3,}".utf8)) == Item(itemId: 3))
    }
}
