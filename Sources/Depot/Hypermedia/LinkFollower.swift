import Foundation

/// Turns links into requests and sends them: the work behind ``HypermediaClient`` and
/// ``Backend/follow(_:with:body:origin:allowsForeignOrigins:coding:as:)``.
struct LinkFollower: Sendable {
    let backend: any Backend
    let root: URL?
    let coding: JSONCoding
    let allowsForeignOrigins: Bool

    func request(
        for link: Link, values: [String: JSONValue], body: RequestBody?
    ) throws(ServiceError) -> BackendRequest {
        var request = try bodilessRequest(for: link, values: values, body: body)
        if let body, let (data, contentType) = try body.encoded(with: coding) {
            request.body = data
            request.headers["Content-Type"] = contentType
        }
        return request
    }

    /// The request for `link` without `body` (which ``RequestBody/send(_:coding:through:)``
    /// attaches); without a body, the link's parameters fill its query or its JSON body.
    private func bodilessRequest(
        for link: Link, values: [String: JSONValue], body: RequestBody?
    ) throws(ServiceError) -> BackendRequest {
        let target = try LinkTarget.resolve(
            link, values: values, root: root, allowsForeignOrigins: allowsForeignOrigins)
        var request = BackendRequest(method: link.method, path: target.path, query: target.query)
        if let type = link.type { request.headers["Accept"] = type }
        if body == nil, let parameters = link.parameters {
            let filled = try LinkParameters.fill(parameters, with: values, rel: link.rel)
            if link.method == .get || link.method == .head {
                request.query += Self.queryItems(filled)
            } else {
                // Parameter names are the server's own: no key strategy applies to them.
                request.body = try JSONCoding.default.encode(JSONValue.object(filled))
                request.headers["Content-Type"] = "application/json"
            }
        }
        return request
    }

    func send(_ link: Link, values: [String: JSONValue], body: RequestBody?) -> Future<
        BackendResponse, ServiceError
    > {
        do {
            let request = try bodilessRequest(for: link, values: values, body: body)
            return (body ?? .none).send(request, coding: coding, through: backend)
        } catch {
            return .failure(error)
        }
    }

    func download(
        _ link: Link, values: [String: JSONValue], to file: URL, resumable: Bool, progress: ProgressHandler?
    ) -> Future<URL, ServiceError> {
        do {
            var request = try bodilessRequest(for: link, values: values, body: nil)
            request.destination = DownloadDestination(file, resumable: resumable)
            request.progress = progress
            return backend.download(request)
        } catch {
            return .failure(error)
        }
    }

    func follow<U: Decodable & Sendable>(
        _ link: Link, values: [String: JSONValue], body: RequestBody?, as type: U.Type
    ) -> Future<Resource<U>, ServiceError> {
        let coding = coding
        return send(link, values: values, body: body).tryMap { response throws(ServiceError) in
            var resource = try coding.decode(Resource<U>.self, from: response.body)
            resource.coding = coding
            return resource
        }
    }

    /// Parameters as query items, names sorted: scalars as their text, arrays as
    /// repeated names; `null` and objects are left out.
    private static func queryItems(_ parameters: [String: JSONValue]) -> [URLQueryItem] {
        parameters.sorted { $0.key < $1.key }.flatMap { name, value in
            (value.arrayValue ?? [value]).compactMap { element in
                element.templateText.map { URLQueryItem(name: name, value: $0) }
            }
        }
    }
}

extension Backend {
    /// Follows a hypermedia `link` through this backend and decodes the answer as a
    /// ``Resource``; ``HypermediaClient`` does the same with the root URL kept for you.
    ///
    /// ```swift
    /// let cart = try await backend.follow(rent, origin: apiRoot, as: Cart.self).value
    /// ```
    ///
    /// - Parameters:
    ///   - link: a link the API offered.
    ///   - values: values for the templates in its href and parameters.
    ///   - body: a body to send instead of the link's parameters.
    ///   - origin: the API's root URL, against which absolute hrefs are checked and made
    ///     relative. Without it only relative hrefs can be followed (a leading `/` is
    ///     dropped: paths are relative to the backend's base), and absolute URLs are
    ///     refused unless `allowsForeignOrigins`.
    ///   - allowsForeignOrigins: follow links to other origins than `origin`'s.
    ///   - coding: the JSON coding for the answer and for `body`.
    ///   - type: the entity type of the answer.
    public func follow<U: Decodable & Sendable>(
        _ link: Link, with values: [String: JSONValue] = [:], body: RequestBody? = nil, origin: URL? = nil,
        allowsForeignOrigins: Bool = false, coding: JSONCoding = .default, as type: U.Type = U.self
    ) -> Future<Resource<U>, ServiceError> {
        LinkFollower(backend: self, root: origin, coding: coding, allowsForeignOrigins: allowsForeignOrigins)
            .follow(link, values: values, body: body, as: type)
    }

    /// Follows a hypermedia `link` through this backend and returns the raw response,
    /// for answers that are not a JSON resource. Parameters as for
    /// ``follow(_:with:body:origin:allowsForeignOrigins:coding:as:)``.
    public func send(
        _ link: Link, with values: [String: JSONValue] = [:], body: RequestBody? = nil, origin: URL? = nil,
        allowsForeignOrigins: Bool = false, coding: JSONCoding = .default
    ) -> Future<BackendResponse, ServiceError> {
        LinkFollower(backend: self, root: origin, coding: coding, allowsForeignOrigins: allowsForeignOrigins)
            .send(link, values: values, body: body)
    }
}
