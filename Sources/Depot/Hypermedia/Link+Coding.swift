import Foundation

extension Link: Codable {
    /// Decodes a link in the array form, `{"rel": "rent", "href": "/cart", "method": "POST"}`.
    ///
    /// `method` is `GET` when absent, in any letter case when present; a method Depot
    /// does not know is a decoding error, as is a missing `rel` or `href`. `templated`
    /// defaults to `false`. Members other than those of ``Link`` (`name`, `profile`,
    /// `hreflang`) are ignored. Links inside a HAL `_links` object take their `rel`
    /// from the key instead; ``Resource`` reads both forms.
    public init(from decoder: any Decoder) throws {
        let fields = try LinkFields(from: decoder)
        guard let rel = fields.rel else {
            let container = try decoder.container(keyedBy: AnyKey.self)
            throw DecodingError.keyNotFound(
                AnyKey("rel"),
                DecodingError.Context(
                    codingPath: container.codingPath,
                    debugDescription: "a link in the array form needs a \"rel\""))
        }
        self = fields.link(rel: rel)
    }

    /// Encodes the link in the array form, leaving out what is implied: `method` when
    /// it is `GET`, `templated` when `false`, and absent optional members.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: AnyKey.self)
        try container.encode(rel, forKey: AnyKey("rel"))
        try container.encode(href, forKey: AnyKey("href"))
        if method != .get { try container.encode(method.rawValue, forKey: AnyKey("method")) }
        try container.encodeIfPresent(type, forKey: AnyKey("type"))
        if templated { try container.encode(true, forKey: AnyKey("templated")) }
        try container.encodeIfPresent(parameters, forKey: AnyKey("parameters"))
        try container.encodeIfPresent(title, forKey: AnyKey("title"))
        try container.encodeIfPresent(deprecation, forKey: AnyKey("deprecation"))
    }
}

/// The members of one link object, with `rel` optional since HAL puts it in the key.
struct LinkFields: Decodable {
    var rel: String?
    var href: String
    var method: HTTPMethod
    var type: String?
    var templated: Bool
    var parameters: [String: JSONValue]?
    var title: String?
    var deprecation: String?

    private enum CodingKeys: String, CodingKey {
        case rel, href, method, type, templated, parameters, title, deprecation
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        rel = try container.decodeIfPresent(String.self, forKey: .rel)
        href = try container.decode(String.self, forKey: .href)
        if let name = try container.decodeIfPresent(String.self, forKey: .method) {
            guard let method = HTTPMethod(name: name) else {
                throw DecodingError.dataCorruptedError(
                    forKey: .method, in: container,
                    debugDescription: "unknown HTTP method \"\(name.prefix(40))\"")
            }
            self.method = method
        } else {
            method = .get
        }
        type = try container.decodeIfPresent(String.self, forKey: .type)
        templated = try container.decodeIfPresent(Bool.self, forKey: .templated) ?? false
        parameters = try container.decodeIfPresent([String: JSONValue].self, forKey: .parameters)
        title = try container.decodeIfPresent(String.self, forKey: .title)
        // HAL says a URL; some servers send `true`, which says as much.
        if let flag = try? container.decodeIfPresent(Bool.self, forKey: .deprecation) {
            deprecation = flag ? "true" : nil
        } else {
            deprecation = try container.decodeIfPresent(String.self, forKey: .deprecation)
        }
    }

    func link(rel: String) -> Link {
        Link(
            rel: rel, href: href, method: method, type: type, templated: templated, parameters: parameters,
            title: title, deprecation: deprecation)
    }
}

/// The value of a `_links` member in either form: HAL's object keyed by relation
/// (each holding one link or an array of them) or an array of links with `rel`.
struct LinkList: Decodable {
    var links: [Link]

    init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            links = []
            while !array.isAtEnd { links.append(try array.decode(Link.self)) }
            return
        }
        // A JSON object has no order: relations come sorted by name, links within a
        // relation in the order of their array.
        let object = try decoder.container(keyedBy: AnyKey.self)
        links = []
        for key in object.allKeys.sorted(by: { $0.stringValue < $1.stringValue }) {
            if var array = try? object.nestedUnkeyedContainer(forKey: key) {
                while !array.isAtEnd {
                    links.append(try array.decode(LinkFields.self).link(rel: key.stringValue))
                }
            } else {
                links.append(try object.decode(LinkFields.self, forKey: key).link(rel: key.stringValue))
            }
        }
    }
}
