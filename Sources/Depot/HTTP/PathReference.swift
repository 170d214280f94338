/// A request's path read as an RFC 3986 reference, the one way every backend reads
/// ``BackendRequest/path``: a relative path (`posts/1`), an absolute path
/// (`/api/posts/1`), or an absolute URL (`https://host/…`, `//host/…`), each with the
/// query it may carry and without its fragment.
package struct PathReference {
    /// The path, without query or fragment; for an absolute URL, the whole URL before
    /// its query.
    package var path: Substring
    /// The query the path carried, without its `?`; empty for none.
    package var query: Substring
    /// The absolute URL text when the reference is one; `//host/…` takes `scheme`.
    package var absoluteURL: String?

    /// Reads `text`, completing a scheme-relative `//host/…` with `scheme`.
    package init(_ text: String, scheme: String) {
        // Searched as bytes (each delimiter is ASCII; a search by `Character` breaks the text
        // into grapheme clusters on the way): every request made from a path is read here.
        var reference = Substring(text)
        if let hash = reference.utf8.firstIndex(of: UInt8(ascii: "#")) { reference = reference[..<hash] }
        path = reference
        query = ""
        if let mark = reference.utf8.firstIndex(of: UInt8(ascii: "?")) {
            path = reference[..<mark]
            query = reference[reference.utf8.index(after: mark)...]
        }
        if path.utf8.starts(with: "//".utf8) {
            absoluteURL = scheme + ":" + path
        } else if Origin.startsWithScheme(path) {
            absoluteURL = String(path)
        }
    }

    /// Whether `path` is relative with no query, fragment or scheme and no leading `/`
    /// (`posts/1`): the common case, which needs no more reading than this.
    package static func isPlainRelative(_ path: String) -> Bool {
        guard path.utf8.first != UInt8(ascii: "/") else { return false }
        return !path.utf8.contains { byte in
            byte == UInt8(ascii: "?") || byte == UInt8(ascii: "#") || byte == UInt8(ascii: ":")
        }
    }
}
