import Foundation
import Testing

@testable import Depot

@Suite("RequestBody and MultipartForm")
struct RequestBodyTests {
    private struct Draft: Encodable, Sendable {
        var userId: Int
        var postTitle: String
    }

    private static func text(_ body: RequestBody, coding: JSONCoding = .default) throws -> (String, String)? {
        guard let encoded = try body.encoded(with: coding) else { return nil }
        return (String(decoding: encoded.data, as: UTF8.self), encoded.contentType)
    }

    @Test func formEncodesSpacesAsPlusAndEscapesReservedCharacters() throws {
        let body = RequestBody.form([
            ("grant_type", "password"), ("user name", "ann smith"), ("a&b", "c=d+e"),
            ("scope", "read"), ("scope", "write"), ("note", "é~*-._/?"),
        ])
        let (text, contentType) = try #require(try Self.text(body))
        #expect(contentType == "application/x-www-form-urlencoded")
        #expect(
            text
                == "grant_type=password&user+name=ann+smith&a%26b=c%3Dd%2Be&scope=read&scope=write"
                + "&note=%C3%A9%7E*-._%2F%3F")
    }

    @Test func emptyFormIsAnEmptyBody() throws {
        let (text, _) = try #require(try Self.text(.form([])))
        #expect(text.isEmpty)
    }

    @Test func multipartLayout() throws {
        var form = MultipartForm(boundary: "XyZ")
        form.append("title", "Holiday")
        form.append(
            "photo", file: Data([0xFF, 0xD8, 0x00]), filename: "beach.jpg", contentType: "image/jpeg")
        form.append("raw", file: Data("abc".utf8), filename: "a.bin")
        let encoded = try #require(try RequestBody.multipart(form).encoded(with: .default))
        #expect(encoded.contentType == "multipart/form-data; boundary=XyZ")
        #expect(form.contentType == encoded.contentType)
        var expected = Data()
        expected.append(
            Data("--XyZ\r\nContent-Disposition: form-data; name=\"title\"\r\n\r\nHoliday\r\n".utf8))
        expected.append(
            Data(
                ("--XyZ\r\nContent-Disposition: form-data; name=\"photo\"; filename=\"beach.jpg\"\r\n"
                    + "Content-Type: image/jpeg\r\n\r\n").utf8))
        expected.append(Data([0xFF, 0xD8, 0x00]))
        expected.append(Data("\r\n".utf8))
        expected.append(
            Data(
                ("--XyZ\r\nContent-Disposition: form-data; name=\"raw\"; filename=\"a.bin\"\r\n"
                    + "Content-Type: application/octet-stream\r\n\r\nabc\r\n--XyZ--\r\n").utf8))
        #expect(encoded.data == expected)
    }

    @Test func multipartEscapesQuotesAndLineBreaksInNames() throws {
        var form = MultipartForm(boundary: "b")
        form.append("a\"b\r\nc", file: Data(), filename: "x\".txt")
        let text = String(decoding: try form.encoded(), as: UTF8.self)
        #expect(text.contains(#"name="a%22b%0D%0Ac"; filename="x%22.txt""#))
    }

    @Test func multipartBoundariesAreFreshByDefault() throws {
        let first = MultipartForm()
        let second = MultipartForm()
        #expect(!first.boundary.isEmpty)
        #expect(first.boundary != second.boundary)
        #expect(String(decoding: try first.encoded(), as: UTF8.self) == "--\(first.boundary)--\r\n")
    }

    @Test func jsonUsesTheCodingsEncoder() throws {
        let body = RequestBody.json(Draft(userId: 1, postTitle: "Hello"))
        let encoded = try #require(try body.encoded(with: JSONCoding.default.keyStrategy(.snakeCase)))
        #expect(encoded.contentType == "application/json")
        let object = try #require(try JSONSerialization.jsonObject(with: encoded.data) as? [String: Any])
        #expect(object["user_id"] as? Int == 1)
        #expect(object["post_title"] as? String == "Hello")
        #expect(object["userId"] == nil)

        let plain = try #require(try body.encoded(with: .default))
        let camel = try #require(try JSONSerialization.jsonObject(with: plain.data) as? [String: Any])
        #expect(camel["userId"] as? Int == 1)
    }

    @Test func jsonThatCannotBeEncodedIsAnInvalidRequest() {
        let error = #expect(throws: ServiceError.self) {
            try RequestBody.json(["x": Double.infinity]).encoded(with: .default)
        }
        #expect(error?.caseName == "invalidRequest")
    }

    @Test func noneAndRawData() throws {
        #expect(try RequestBody.none.encoded(with: .default) == nil)
        let raw = try #require(
            try RequestBody.data(Data([1, 2]), contentType: "application/x-thing").encoded(with: .default))
        #expect(raw.data == Data([1, 2]))
        #expect(raw.contentType == "application/x-thing")
    }
}
