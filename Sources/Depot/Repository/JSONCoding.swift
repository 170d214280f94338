import Foundation

/// How a repository turns entities into request bodies and response bodies into
/// entities: a `JSONDecoder`, a `JSONEncoder`, and an optional envelope key.
///
/// ```swift
/// let coding = JSONCoding.default.dateStrategy(.iso8601).keyStrategy(.snakeCase).envelope("data")
/// ```
///
/// Build it once (a stored or `static let`) to reuse its coders: the article *Defining repositories*.
public struct JSONCoding: @unchecked Sendable {
    // The coders are configured while this value is built and never mutated after,
    // which is what makes sharing them between threads safe.
    /// The decoder for response bodies. Treat it as read-only once built.
    public let decoder: JSONDecoder
    /// The encoder for request bodies. Treat it as read-only once built.
    public let encoder: JSONEncoder
    /// The key path of the payload inside every response (`["data"]` for
    /// `{"data": …}`); empty when responses are the payload itself.
    public let envelope: [String]

    /// Creates a coding from coders you configured; do not change them afterwards.
    public init(
        decoder: JSONDecoder = JSONDecoder(), encoder: JSONEncoder = JSONEncoder(), envelope: [String] = []
    ) {
        self.decoder = decoder
        self.encoder = encoder
        self.envelope = envelope
    }

    /// Foundation's default coders, no envelope.
    public static let `default` = JSONCoding()

    /// A copy that decodes and encodes dates with `strategy` on both sides.
    public func dateStrategy(_ strategy: DateStrategy) -> JSONCoding {
        let (decoder, encoder) = (decoder.copy(), encoder.copy())
        switch strategy {
        case .iso8601:
            decoder.dateDecodingStrategy = .iso8601
            encoder.dateEncodingStrategy = .iso8601
        case .secondsSince1970:
            decoder.dateDecodingStrategy = .secondsSince1970
            encoder.dateEncodingStrategy = .secondsSince1970
        case .millisecondsSince1970:
            decoder.dateDecodingStrategy = .millisecondsSince1970
            encoder.dateEncodingStrategy = .millisecondsSince1970
        }
        return JSONCoding(decoder: decoder, encoder: encoder, envelope: envelope)
    }

    /// A copy that maps keys with `strategy` on both sides.
    public func keyStrategy(_ strategy: KeyStrategy) -> JSONCoding {
        let (decoder, encoder) = (decoder.copy(), encoder.copy())
        switch strategy {
        case .useDefaultKeys:
            decoder.keyDecodingStrategy = .useDefaultKeys
            encoder.keyEncodingStrategy = .useDefaultKeys
        case .snakeCase:
            decoder.keyDecodingStrategy = .convertFromSnakeCase
            encoder.keyEncodingStrategy = .convertToSnakeCase
        }
        return JSONCoding(decoder: decoder, encoder: encoder, envelope: envelope)
    }

    /// A copy that reads every payload from under `keys` (`envelope("data")` for
    /// `{"data": …}`, `envelope("response", "items")` for deeper ones).
    public func envelope(_ keys: String...) -> JSONCoding {
        JSONCoding(decoder: decoder, encoder: encoder, envelope: keys)
    }

    /// A date format used both ways.
    public enum DateStrategy: Sendable {
        /// ISO 8601 strings, `2024-05-01T12:00:00Z`.
        case iso8601
        /// Seconds since 1970 as a number.
        case secondsSince1970
        /// Milliseconds since 1970 as a number.
        case millisecondsSince1970
    }

    /// A key mapping used both ways.
    public enum KeyStrategy: Sendable {
        /// Keys as the Swift properties spell them.
        case useDefaultKeys
        /// `snake_case` on the wire, `camelCase` in Swift.
        case snakeCase
    }
}

extension JSONDecoder {
    /// A new decoder with the same settings.
    func copy() -> JSONDecoder {
        let copy = JSONDecoder()
        copy.dateDecodingStrategy = dateDecodingStrategy
        copy.dataDecodingStrategy = dataDecodingStrategy
        copy.keyDecodingStrategy = keyDecodingStrategy
        copy.nonConformingFloatDecodingStrategy = nonConformingFloatDecodingStrategy
        copy.allowsJSON5 = allowsJSON5
        copy.assumesTopLevelDictionary = assumesTopLevelDictionary
        copy.userInfo = userInfo
        return copy
    }
}

extension JSONEncoder {
    /// A new encoder with the same settings.
    func copy() -> JSONEncoder {
        let copy = JSONEncoder()
        copy.dateEncodingStrategy = dateEncodingStrategy
        copy.dataEncodingStrategy = dataEncodingStrategy
        copy.keyEncodingStrategy = keyEncodingStrategy
        copy.nonConformingFloatEncodingStrategy = nonConformingFloatEncodingStrategy
        copy.outputFormatting = outputFormatting
        copy.userInfo = userInfo
        return copy
    }
}
