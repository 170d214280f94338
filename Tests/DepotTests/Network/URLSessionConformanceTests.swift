import Depot
import DepotBackendConformance
import Foundation
import Testing

@testable import Depot

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

extension BackendUnderTest {
    /// `URLSessionBackend` with a session of its own.
    static let urlSession = BackendUnderTest(
        name: "URLSessionBackend", followsRedirectsWithBody: !TaskDelegate.dropsBodyOnRedirect,
        transportCode: linuxTransportCode,
        make: { settings in
            URLSessionBackend(
                baseURL: settings.baseURL, headers: settings.headers, timeout: settings.timeout,
                maximumResponseBytes: settings.maximumResponseBytes)
        })

    /// FoundationNetworking (libcurl) reports: no answer at all ("Empty reply from
    /// server") as badServerResponse (-1011); a body cut short ("transfer closed with 900
    /// bytes remaining to read") as -1, the unknown code; garbage ("Received HTTP/0.9 when
    /// not allowed") as unsupportedURL (-1002). Apple platforms choose their own codes.
    private static func linuxTransportCode(_ fault: TransportFault) -> Int? {
        #if canImport(FoundationNetworking)
            switch fault {
            case .closesBeforeAnswering: URLError.Code.badServerResponse.rawValue
            case .closesMidBody: URLError.Code.unknown.rawValue
            case .garbage: URLError.Code.unsupportedURL.rawValue
            }
        #else
            nil
        #endif
    }
}

/// The shared network suites of DepotBackendConformance (the fault matrix, redirects,
/// authentication and paging over real HTTP), run on `URLSessionBackend`; the
/// DepotAsyncHTTPClient package runs the same suites on `AsyncHTTPClientBackend`.
@Suite(.liveServers) struct URLSessionConformanceTests {
    @Test(arguments: FaultMatrix.rows) func faultMatrix(_ row: FaultMatrix.Row) async throws {
        try await FaultMatrix.check(row, on: .urlSession)
    }

    @Test(arguments: NetworkConformance.redirects) func redirects(_ check: ConformanceCheck) async throws {
        try await check.run(on: .urlSession)
    }

    @Test(arguments: NetworkConformance.authentication) func authentication(_ check: ConformanceCheck)
        async throws
    {
        try await check.run(on: .urlSession)
    }

    @Test(arguments: NetworkConformance.paging) func paging(_ check: ConformanceCheck) async throws {
        try await check.run(on: .urlSession)
    }

    @Test(arguments: NetworkConformance.transport) func transport(_ check: ConformanceCheck) async throws {
        try await check.run(on: .urlSession)
    }

    @Test(arguments: NetworkConformance.live) func live(_ check: ConformanceCheck) async throws {
        try await check.run(on: .urlSession)
    }

    @Test func aSessionPassedInKeepsTheLimitToo() async throws {
        // On Linux such a session shows the body only to its own delegate: the limit is
        // checked once the body has arrived, with the same error.
        let session = URLSession(configuration: .ephemeral)
        defer { session.finishTasksAndInvalidate() }
        let backend = URLSessionBackend(
            baseURL: try #require(LiveServer.fault), session: session, timeout: 5, maximumResponseBytes: 1000)
        let over = await backend.send(BackendRequest(path: "large?bytes=1001")).result
        guard case .transport(let code, _) = over.failure else {
            Issue.record("expected a transport failure, got \(over)")
            return
        }
        #expect(code == URLError.Code.dataLengthExceedsMaximum.rawValue)
        let within = try await backend.send(BackendRequest(path: "large?bytes=1000")).value
        #expect(within.body.count == 1000)
    }
}
