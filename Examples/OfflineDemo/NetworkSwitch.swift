import Depot
import DepotInMemory
import Foundation

/// The demo's network: it reaches `server` while on, and fails every request with
/// `.noConnection` while off, as a device in airplane mode does. (A test on an
/// `InMemoryBackend` alone writes `backend.failAll(with: .noConnection)` instead; this
/// switch also cuts a real server given with `--base-url`.)
final class NetworkSwitch: Backend, @unchecked Sendable {
    private let server: any Backend
    private let lock = NSLock()
    private var on = true

    init(_ server: any Backend) {
        self.server = server
    }

    /// Whether requests reach the server.
    var isOn: Bool {
        get { lock.withLock { on } }
        set { lock.withLock { on = newValue } }
    }

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        isOn ? server.send(request) : .failure(.noConnection)
    }
}
