import Foundation

/// The few values a paging style needs from an envelope body (`count`, `next`, …),
/// decoded without decoding the items.
struct EnvelopeReader {
    private let values: [[String]: JSONValue]

    /// Reads the values at `paths` from `body`, a JSON object.
    ///
    /// - Throws: ``ServiceError/decoding(_:)`` when the body is not a JSON object or a
    ///   key on the way to a value is not an object.
    init(_ body: Data, paths: [[String]]) throws(ServiceError) {
        let decoder = JSONDecoder()
        decoder.userInfo[Fields.pathsKey] = paths
        do {
            values = try decoder.decodeChecked(Fields.self, from: body).values
        } catch let error as DecodingError {
            throw .decoding(DecodingFailure(type: "paging envelope", error: error))
        } catch {
            throw .decoding(
                DecodingFailure(type: "paging envelope", codingPath: "(root)", description: "\(error)"))
        }
    }

    /// Whether the body has a value (perhaps `null`) at `path`.
    func contains(_ path: [String]) -> Bool {
        values[path] != nil
    }

    /// The value at `path`; `nil` when it is absent or `null`.
    func value(at path: [String]) -> JSONValue? {
        guard let value = values[path], value != .null else { return nil }
        return value
    }

    /// The non-negative integer at `path`, `nil` when it is absent or `null`.
    ///
    /// - Throws: ``ServiceError/decoding(_:)`` naming the key when it holds anything else.
    func integer(at path: [String]) throws(ServiceError) -> Int? {
        guard let value = value(at: path) else { return nil }
        guard let number = value.intValue, number >= 0 else {
            throw Self.mismatch(at: path, expected: "a non-negative integer", got: value)
        }
        return number
    }

    /// The `.decoding` error for the value at `path`, which is not what was expected.
    static func mismatch(at path: [String], expected: String, got value: JSONValue) -> ServiceError {
        let text = String(decoding: (try? JSONEncoder().encode(value)) ?? Data(), as: UTF8.self)
        return .decoding(
            DecodingFailure(
                type: "paging envelope", codingPath: path.joined(separator: "."),
                description: "expected \(expected), got \(text.prefix(100))"))
    }

    /// The link a string value stands for, when it is a URL or a path.
    static func link(_ rel: String, _ value: JSONValue?) -> Link? {
        guard let href = value?.stringValue, PageAddress.isLink(href) else { return nil }
        return Link(rel: rel, href: href)
    }

    /// Decodes the values at the key paths in its `userInfo`, and nothing else.
    private struct Fields: Decodable {
        // A constant, valid key: the initializer fails only for keys it cannot represent.
        static var pathsKey: CodingUserInfoKey { CodingUserInfoKey(rawValue: "depot.envelopePaths")! }

        var values: [[String]: JSONValue] = [:]

        init(from decoder: any Decoder) throws {
            let paths = decoder.userInfo[Self.pathsKey] as? [[String]] ?? []
            let root = try decoder.container(keyedBy: AnyKey.self)
            for path in paths {
                guard let last = path.last else { continue }
                var container = root
                var found = true
                for name in path.dropLast() {
                    let key = AnyKey(name)
                    guard container.contains(key), try !container.decodeNil(forKey: key) else {
                        found = false
                        break
                    }
                    container = try container.nestedContainer(keyedBy: AnyKey.self, forKey: key)
                }
                let key = AnyKey(last)
                if found, container.contains(key) {
                    values[path] = try container.decode(JSONValue.self, forKey: key)
                }
            }
        }
    }
}
