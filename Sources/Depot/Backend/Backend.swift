/// Sends requests and delivers successful responses: the one seam between
/// repositories and the network.
///
/// Depot ships ``URLSessionBackend`` for HTTP and `InMemoryBackend` for tests,
/// previews and offline demos. Write your own to reach any other transport; it must
/// deliver only successes (use ``ServiceError/init(response:for:)`` to classify) and
/// complete with ``ServiceError/cancelled`` when cancelled.
///
/// A backend never knows entity types; repositories encode and decode.
public protocol Backend: Sendable {
    /// Returns a future that sends `request` each time it starts.
    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError>
}
