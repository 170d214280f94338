@testable import Depot

// Helpers every test folder shares. Keep folder-specific fixtures beside their tests.

extension Result {
    /// The value, or `nil` for a failure.
    var value: Success? {
        if case .success(let value) = self { return value }
        return nil
    }

    /// The failure, or `nil` for a success.
    var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}

extension ServiceError {
    /// The case's name, for table-driven assertions (`#expect(error.caseName == "notFound")`).
    var caseName: String {
        switch self {
        case .invalidRequest: "invalidRequest"
        case .cannotConnect: "cannotConnect"
        case .noConnection: "noConnection"
        case .timedOut: "timedOut"
        case .cancelled: "cancelled"
        case .transport: "transport"
        case .unauthorized: "unauthorized"
        case .forbidden: "forbidden"
        case .notFound: "notFound"
        case .conflict: "conflict"
        case .clientError: "clientError"
        case .serviceUnavailable: "serviceUnavailable"
        case .serverError: "serverError"
        case .unexpectedStatus: "unexpectedStatus"
        case .decoding: "decoding"
        case .queued: "queued"
        }
    }
}

/// Forwards requests to another backend and opens ``started`` once one has been handed to
/// it, so that a test acts while the request is surely in flight, however busy the machine.
struct AnnouncingBackend: Backend {
    let inner: any Backend
    /// Opens when the first request has started on ``inner``.
    let started = OneShotGate()

    init(_ inner: any Backend) {
        self.inner = inner
    }

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        let inner = inner
        let started = started
        return Future { completion in
            let work = inner.send(request).start { completion($0) }
            started.open()
            return work
        }
    }
}
