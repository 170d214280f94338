import Foundation

extension JSONCoding {
    /// Decodes `type` from `data`, under the coding's envelope and then under
    /// `keyPath` (a paging envelope's `results`, say).
    ///
    /// - Throws: ``ServiceError/decoding(_:)`` with the type and the coding path of
    ///   the value that failed.
    @inlinable
    public func decode<T: Decodable>(
        _ type: T.Type, from data: Data, at keyPath: [String] = []
    ) throws(ServiceError) -> T {
        // Inlinable, so that the usual case (no envelope, no key path) is specialized for `T`
        // where it is called: no generic metadata looked up per decode.
        guard envelope.isEmpty, keyPath.isEmpty else {
            return try decodeScoped(T.self, from: data, at: keyPath)
        }
        do {
            return try decoder.decodeChecked(T.self, from: data)
        } catch {
            throw Self.failure(error, decoding: T.self)
        }
    }

    /// ``decode(_:from:at:)`` under the envelope and `keyPath`, at least one of them not empty.
    @usableFromInline
    func decodeScoped<T: Decodable>(_ type: T.Type, from data: Data, at keyPath: [String])
        throws(ServiceError)
        -> T
    {
        let scoped = decoder.copy()
        scoped.userInfo[KeyPathBox<T>.pathKey] = envelope + keyPath
        do {
            return try scoped.decodeChecked(KeyPathBox<T>.self, from: data).value
        } catch {
            throw Self.failure(error, decoding: T.self)
        }
    }

    /// ``ServiceError/decoding(_:)`` for `error`, thrown while decoding `type`.
    @usableFromInline
    static func failure<T>(_ error: any Error, decoding type: T.Type) -> ServiceError {
        if let error = error as? DecodingError {
            return .decoding(DecodingFailure(type: String(describing: T.self), error: error))
        }
        return .decoding(
            DecodingFailure(type: String(describing: T.self), codingPath: "", description: "\(error)"))
    }

    /// Encodes `value` as JSON.
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` when the value cannot be encoded
    ///   (a `Double.nan`, say), since that request cannot be built.
    public func encode<T: Encodable>(_ value: T) throws(ServiceError) -> Data {
        do {
            return try encoder.encode(value)
        } catch {
            throw .invalidRequest("could not encode \(T.self) as JSON: \(error)")
        }
    }
}

extension DecodingFailure {
    /// Describes a `DecodingError` with a readable coding path (`[3].author.id`).
    init(type: String, error: DecodingError) {
        let context: DecodingError.Context
        let detail: String
        switch error {
        case .typeMismatch(let expected, let errorContext):
            context = errorContext
            detail = "expected \(expected): \(errorContext.debugDescription)"
        case .valueNotFound(let expected, let errorContext):
            context = errorContext
            detail = "missing \(expected) value: \(errorContext.debugDescription)"
        case .keyNotFound(let key, let errorContext):
            context = DecodingError.Context(
                codingPath: errorContext.codingPath + [key], debugDescription: errorContext.debugDescription)
            detail = "missing key \"\(key.stringValue)\""
        case .dataCorrupted(let errorContext):
            context = errorContext
            detail = errorContext.debugDescription
        @unknown default:
            context = DecodingError.Context(codingPath: [], debugDescription: "\(error)")
            detail = "\(error)"
        }
        let path = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? ".\($0.stringValue)" }.joined()
        let readable = path.hasPrefix(".") ? String(path.dropFirst()) : path
        self.init(type: type, codingPath: readable.isEmpty ? "(root)" : readable, description: detail)
    }
}

/// Decodes a `T` found under a key path given in the decoder's `userInfo`.
private struct KeyPathBox<T: Decodable>: Decodable {
    // A constant, valid key: the initializer fails only for keys it cannot represent.
    static var pathKey: CodingUserInfoKey { CodingUserInfoKey(rawValue: "depot.keyPath")! }

    let value: T

    init(from decoder: any Decoder) throws {
        let path = decoder.userInfo[Self.pathKey] as? [String] ?? []
        var container = try decoder.container(keyedBy: AnyKey.self)
        for key in path.dropLast() {
            container = try container.nestedContainer(
                keyedBy: AnyKey.self, forKey: Self.key(key, in: container))
        }
        guard let last = path.last else {
            value = try T(from: decoder)
            return
        }
        value = try container.decode(T.self, forKey: Self.key(last, in: container))
    }

    /// The container's key for `name`. A key strategy renames the body's keys before
    /// they are matched (`.convertFromSnakeCase` turns `search_results` into
    /// `searchResults`), so when `name` is not there as written, the key it became is used.
    private static func key(_ name: String, in container: KeyedDecodingContainer<AnyKey>) -> AnyKey {
        let exact = AnyKey(name)
        if container.contains(exact) { return exact }
        let folded = fold(name)
        return container.allKeys.first { fold($0.stringValue) == folded } ?? exact
    }

    private static func fold(_ key: String) -> String {
        key.lowercased().replacingOccurrences(of: "_", with: "")
    }
}

/// A coding key made from any string or integer.
struct AnyKey: CodingKey {
    var stringValue: String
    var intValue: Int?

    init(_ string: String) {
        stringValue = string
    }

    init?(stringValue: String) {
        self.stringValue = stringValue
    }

    init?(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}
