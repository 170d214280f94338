import Foundation

extension Backend {
    /// Sends `request`, which names a ``BackendRequest/destination``, and returns the
    /// downloaded file once it is complete and in place.
    ///
    /// Every Depot backend streams such an answer to disk itself. A backend of your own
    /// that hands the body back in memory instead still works: the body of a 2xx is then
    /// written to the destination here, the same way (partial file, then a move into
    /// place). A `304` to a conditional download leaves the file as it was and returns it.
    ///
    /// - Returns: a future failing with ``ServiceError/invalidRequest(_:)`` when the
    ///   request has no destination.
    public func download(_ request: BackendRequest) -> Future<URL, ServiceError> {
        guard let destination = request.destination else {
            return .failure(.invalidRequest("a download needs a destination (BackendRequest.destination)"))
        }
        return send(request).tryMap { response throws(ServiceError) in
            if let file = response.file { return file }
            // A `304` to a conditional download: the file the caller has is current.
            guard (200..<300).contains(response.status) else { return destination.file }
            // A backend that kept the body in memory: written the way Depot's backends write it.
            let download = try DownloadFile(destination)
            _ = try download.begin(status: 200, headers: response.headers, declaredLength: nil)
            do throws(ServiceError) {
                _ = try download.write(response.body)
            } catch {
                download.abandon(after: error, discarding: true)
                throw error
            }
            return try download.finish()
        }
    }
}
