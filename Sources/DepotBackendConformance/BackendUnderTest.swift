import Depot
import Foundation
import Testing

/// A backend the shared network suites run on: how to make one for a server, and the
/// few answers in which HTTP clients differ by design.
///
/// Depot's own tests run the suites on `URLSessionBackend`; the `DepotAsyncHTTPClient`
/// package runs the same suites on `AsyncHTTPClientBackend`; a third backend runs them
/// the same way, from its own test target:
///
/// ```swift
/// import DepotBackendConformance
///
/// extension BackendUnderTest {
///     static let mine = BackendUnderTest(name: "MyBackend") { settings in
///         MyBackend(baseURL: settings.baseURL, headers: settings.headers,
///                   timeout: settings.timeout, maximumResponseBytes: settings.maximumResponseBytes)
///     }
/// }
///
/// @Suite(.liveServers) struct MyBackendConformance {
///     @Test(arguments: FaultMatrix.rows) func faults(_ row: FaultMatrix.Row) async throws {
///         try await FaultMatrix.check(row, on: .mine)
///     }
///     @Test(arguments: NetworkConformance.all) func network(_ check: ConformanceCheck) async throws {
///         try await check.run(on: .mine)
///     }
/// }
/// ```
public struct BackendUnderTest: Sendable, CustomStringConvertible {
    /// The backend's name, in test output.
    public let name: String
    /// Makes a backend with these settings.
    public let make: @Sendable (BackendSettings) -> any Backend
    /// The ``ServiceError/transport(code:description:)`` code the backend reports for a
    /// fault whose code is the client's own choice, or `nil` to check only the case.
    public let transportCode: @Sendable (TransportFault) -> Int?
    /// Whether a `307` answer to a request with a body is followed with the body (`false`
    /// where the client would drop it, and the `307` must reach the caller instead).
    public let followsRedirectsWithBody: Bool

    /// A backend under test.
    ///
    /// - Parameters:
    ///   - name: its name, in test output.
    ///   - followsRedirectsWithBody: whether it resends a body after a `307`.
    ///   - transportCode: the codes it reports for ``TransportFault``s (none by default).
    ///   - make: makes a backend with the given settings.
    public init(
        name: String, followsRedirectsWithBody: Bool = true,
        transportCode: @escaping @Sendable (TransportFault) -> Int? = { _ in nil },
        make: @escaping @Sendable (BackendSettings) -> any Backend
    ) {
        self.name = name
        self.make = make
        self.transportCode = transportCode
        self.followsRedirectsWithBody = followsRedirectsWithBody
    }

    /// A backend on `baseURL` with these settings.
    public func backend(
        _ baseURL: URL, headers: HTTPHeaders = [:], timeout: TimeInterval? = 10,
        maximumResponseBytes: Int? = nil
    ) -> any Backend {
        make(
            BackendSettings(
                baseURL: baseURL, headers: headers, timeout: timeout,
                maximumResponseBytes: maximumResponseBytes))
    }

    /// The backend's name.
    public var description: String { name }
}

/// What a suite asks of a backend it makes.
public struct BackendSettings: Sendable {
    /// The base URL relative paths are resolved against.
    public var baseURL: URL
    /// Header fields sent with every request.
    public var headers: HTTPHeaders
    /// The seconds a request may take as a whole, or `nil` for the backend's default.
    public var timeout: TimeInterval?
    /// The most bytes a response body may have, or `nil` for no limit.
    public var maximumResponseBytes: Int?

    /// Settings for a backend on `baseURL`.
    public init(
        baseURL: URL, headers: HTTPHeaders = [:], timeout: TimeInterval? = nil,
        maximumResponseBytes: Int? = nil
    ) {
        self.baseURL = baseURL
        self.headers = headers
        self.timeout = timeout
        self.maximumResponseBytes = maximumResponseBytes
    }
}

/// Transport faults whose ``ServiceError/transport(code:description:)`` code each HTTP
/// client chooses (see ``BackendUnderTest/transportCode``).
public enum TransportFault: Sendable, Hashable {
    /// The server accepts the connection and closes it without answering.
    case closesBeforeAnswering
    /// The server closes the connection in the middle of a declared body.
    case closesMidBody
    /// The server answers with bytes that are not HTTP.
    case garbage
}

/// One check of a shared suite, run on a ``BackendUnderTest``.
public struct ConformanceCheck: Sendable, CustomTestStringConvertible {
    /// What the check shows, in test output.
    public let name: String
    private let body: @Sendable (BackendUnderTest) async throws -> Void

    init(_ name: String, _ body: @escaping @Sendable (BackendUnderTest) async throws -> Void) {
        self.name = name
        self.body = body
    }

    /// Runs the check on `backend`, recording its issues in the running test.
    public func run(on backend: BackendUnderTest) async throws {
        try await body(backend)
    }

    /// The check's name.
    public var testDescription: String { name }
}

/// The shared network suites besides ``FaultMatrix``: redirects, authentication, paging,
/// transport (cancellation, compression, uploads from files) and live queries over real HTTP
/// (httpbin and the DRF app that `bash scripts/test` starts).
public enum NetworkConformance {
    /// Every check: ``redirects``, ``authentication``, ``paging``, ``transport`` and ``live``.
    public static var all: [ConformanceCheck] { redirects + authentication + paging + transport + live }
}
