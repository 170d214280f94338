import Depot

extension BackendResponse {
    /// The `Content-Type` of json-server's JSON answers: `application/json; charset=utf-8`.
    package static let jsonServerContentType = "application/json; charset=utf-8"

    /// `headers` with the JSON `Content-Type` first, unless they set their own.
    package static func jsonHeaders(_ headers: HTTPHeaders = [:]) -> HTTPHeaders {
        guard !headers.fields.isEmpty else { return plainJSONHeaders }
        var result = plainJSONHeaders
        result.merge(headers)
        return result
    }

    private static let plainJSONHeaders: HTTPHeaders = ["Content-Type": jsonServerContentType]
}
