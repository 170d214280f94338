import Depot
import Foundation

/// A backend that records every request and answers each with the response its
/// handler makes (classified like every backend's), for asserting exactly what
/// following a link sends.
final class HypermediaStub: Backend, @unchecked Sendable {
    static let root = URL(string: "https://acmeflix.example/api/")!

    private let lock = NSLock()
    private var received: [BackendRequest] = []
    private let handler: @Sendable (BackendRequest) -> BackendResponse

    init(handler: @escaping @Sendable (BackendRequest) -> BackendResponse) {
        self.handler = handler
    }

    /// Answers every request with `200` and `json`.
    convenience init(json: String = #"{"_links": {"self": {"href": "/api/"}}}"#) {
        self.init { _ in
            BackendResponse(status: 200, headers: ["Content-Type": "application/json"], body: Data(json.utf8))
        }
    }

    /// Every request received, in order.
    var requests: [BackendRequest] {
        lock.withLock { received }
    }

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        Future { completion in
            self.lock.withLock { self.received.append(request) }
            completion(ServiceError.check(self.handler(request), for: request))
            return NotCancellableStub()
        }
    }
}

/// Work that finished before anyone could cancel it.
struct NotCancellableStub: Cancellable {
    func cancel() {}
}

extension BackendRequest {
    /// The body as a JSON value, for comparing bodies without regard to key order.
    var sentJSON: JSONValue? {
        body.flatMap { try? JSONDecoder().decode(JSONValue.self, from: $0) }
    }
}
