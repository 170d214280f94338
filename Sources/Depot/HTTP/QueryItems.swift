import Foundation

extension Array where Element == URLQueryItem {
    /// The first value of the query parameter `name`, `""` for a bare `?name`, or
    /// `nil` when the parameter is absent: `request.query["_page"]` on a recorded
    /// ``BackendRequest``.
    ///
    /// ```swift
    /// let request = try #require(backend.requests.last)
    /// #expect(request.query["_page"] == "2")
    /// #expect(request.query.values(for: "userId") == ["1", "2"])
    /// ```
    public subscript(name: String) -> String? {
        first { $0.name == name }.map { $0.value ?? "" }
    }

    /// Every value of the query parameter `name`, in order (`id=1&id=2` gives
    /// `["1", "2"]`); empty when it is absent.
    public func values(for name: String) -> [String] {
        filter { $0.name == name }.map { $0.value ?? "" }
    }
}
