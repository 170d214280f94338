import Foundation

/// An entity together with the links a hypermedia API sent with it: what the client may
/// do next. It decodes any JSON object that carries `_links` (HAL's, or an array of links)
/// and `_embedded`; read the entity's members through it (`movie.title`) or ``entity``.
///
/// ```swift
/// let movie = try await api.follow(movieLink, as: Movie.self).value
/// if let rent = movie.link("rent") { try await api.follow(rent, as: Cart.self).value }
/// ```
///
/// The forms of `_links` it reads: the article *Following Hypermedia Links*.
@dynamicMemberLookup
public struct Resource<Entity: Sendable>: Sendable {
    /// The entity: the document's members other than `_links` and `_embedded`.
    public var entity: Entity
    /// The links, in document order for the array form; for the HAL object form,
    /// relations sorted by name (JSON objects have no order).
    public var links: [Link]
    /// The raw `_embedded` members by relation, decoded on request by
    /// ``embedded(_:as:)``.
    var embeddedValues: [String: JSONValue]
    /// How embedded resources are decoded: the coding this resource came with.
    var coding: JSONCoding = .default

    /// Creates a resource, for example for a server or a test double to encode.
    public init(_ entity: Entity, links: [Link] = []) {
        self.entity = entity
        self.links = links
        self.embeddedValues = [:]
    }

    /// A property of the entity, so that `movie.title` reads `movie.entity.title`.
    public subscript<Value>(dynamicMember keyPath: KeyPath<Entity, Value>) -> Value {
        entity[keyPath: keyPath]
    }

    // MARK: Capabilities

    /// The relations the resource offers, in the order of ``links``, each once.
    public var relations: [String] {
        var seen = Set<String>()
        return links.map(\.rel).filter { seen.insert($0.lowercased()).inserted }
    }

    /// Whether the resource offers a link with relation `rel` (compared without
    /// regard to case): whether the API allows that action now.
    public func has(_ rel: String) -> Bool {
        link(rel) != nil
    }

    /// The first link with relation `rel` (compared without regard to case), or `nil`
    /// when the API does not offer it now.
    public func link(_ rel: String) -> Link? {
        links[rel: rel]
    }

    /// Every link with relation `rel`, for relations that hold several (HAL arrays).
    public func links(_ rel: String) -> [Link] {
        links.filter { $0.rel.caseInsensitiveEquals(rel) }
    }

    /// Runs `available` with the link when the resource offers `rel`, and
    /// `unavailable` when it does not, for UI code that shows or hides an action:
    ///
    /// ```swift
    /// movie.ifAvailable("rent") { rent in
    ///     rentButton.isHidden = false
    ///     rentAction = rent
    /// } else: {
    ///     rentButton.isHidden = true
    /// }
    /// ```
    @discardableResult
    public func ifAvailable<Result>(
        _ rel: String, _ available: (Link) throws -> Result, else unavailable: () throws -> Result
    ) rethrows -> Result {
        if let link = link(rel) { return try available(link) }
        return try unavailable()
    }

    // MARK: Embedded resources

    /// The relations present in `_embedded`, sorted by name.
    public var embeddedRelations: [String] {
        embeddedValues.keys.sorted()
    }

    /// The resources embedded under `rel` (HAL `_embedded`), decoded as `Resource<U>`
    /// with the coding this resource was decoded with.
    ///
    /// A relation that holds one object gives one resource; an absent relation gives
    /// none.
    ///
    /// - Throws: ``ServiceError/decoding(_:)`` with a coding path such as
    ///   `_embedded.movies[2].title` when an embedded document does not decode.
    public func embedded<U: Decodable & Sendable>(
        _ rel: String, as type: U.Type = U.self
    ) throws(ServiceError) -> [Resource<U>] {
        guard let value = embeddedValues[rel] else { return [] }
        let isArray = value.arrayValue != nil
        let documents = value.arrayValue ?? [value]
        let decoder = coding.decoder
        do {
            let data = try JSONEncoder().encode(documents)
            return try decoder.decodeChecked([Resource<U>].self, from: data).map { resource in
                var resource = resource
                resource.coding = coding
                return resource
            }
        } catch let error as DecodingError {
            var failure = DecodingFailure(type: "Resource<\(U.self)>", error: error)
            var path = failure.codingPath == "(root)" ? "" : failure.codingPath
            if !isArray, path.hasPrefix("[0]") { path.removeFirst(3) }
            let joined = path.isEmpty || path.hasPrefix(".") || path.hasPrefix("[") ? path : "." + path
            failure.codingPath = "_embedded.\(rel)" + joined
            throw .decoding(failure)
        } catch {
            throw .decoding(
                DecodingFailure(
                    type: "Resource<\(U.self)>", codingPath: "_embedded.\(rel)", description: "\(error)"))
        }
    }

    /// A copy with `resources` embedded under `rel`, for a server or a test double
    /// that builds documents to encode.
    ///
    /// - Throws: ``ServiceError/invalidRequest(_:)`` when a resource cannot be encoded.
    public func embedding<U: Encodable & Sendable>(
        _ rel: String, _ resources: [Resource<U>]
    ) throws(ServiceError) -> Resource<Entity> {
        var copy = self
        do {
            let data = try JSONEncoder().encode(resources)
            copy.embeddedValues[rel] = try JSONDecoder().decodeChecked(JSONValue.self, from: data)
        } catch {
            throw .invalidRequest("could not embed \(rel): \(error)")
        }
        return copy
    }
}

// MARK: - Coding

extension Resource: Decodable where Entity: Decodable {
    /// Decodes the entity from the document's members, and `_links` (either form) and
    /// `_embedded` beside it. Both are optional.
    ///
    /// When `Entity` is ``JSONValue``, the entity is the document without `_links`
    /// and `_embedded`.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyKey.self)
        var entity = try Entity(from: decoder)
        if case .object(var members) = entity as? JSONValue {
            members.removeValue(forKey: "_links")
            members.removeValue(forKey: "_embedded")
            if let stripped = JSONValue.object(members) as? Entity { entity = stripped }
        }
        self.entity = entity
        self.links = try container.decodeIfPresent(LinkList.self, forKey: ResourceKey.links)?.links ?? []
        self.embeddedValues =
            try container.decodeIfPresent([String: JSONValue].self, forKey: ResourceKey.embedded) ?? [:]
    }
}

extension Resource: Encodable where Entity: Encodable {
    /// Encodes the entity's members with `_links` (in the array form) and `_embedded`
    /// beside them; each is left out when empty.
    ///
    /// The entity must encode as a JSON object: a struct or class with keyed members,
    /// or a ``JSONValue`` object.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyKey.self)
        if case .object(let members) = entity as? JSONValue {
            for (name, value) in members { try container.encode(value, forKey: AnyKey(name)) }
        } else {
            try entity.encode(to: encoder)
        }
        if !links.isEmpty { try container.encode(links, forKey: ResourceKey.links) }
        if !embeddedValues.isEmpty { try container.encode(embeddedValues, forKey: ResourceKey.embedded) }
    }
}

extension Resource: Equatable where Entity: Equatable {
    /// Resources are equal when their entities, links and embedded documents are.
    public static func == (lhs: Resource, rhs: Resource) -> Bool {
        lhs.entity == rhs.entity && lhs.links == rhs.links && lhs.embeddedValues == rhs.embeddedValues
    }
}

/// The reserved members of a hypermedia document.
private enum ResourceKey {
    static let links = AnyKey("_links")
    static let embedded = AnyKey("_embedded")
}
