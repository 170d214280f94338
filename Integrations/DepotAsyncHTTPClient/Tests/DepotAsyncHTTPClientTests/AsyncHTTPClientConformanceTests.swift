import AsyncHTTPClient
import Depot
import DepotAsyncHTTPClient
import DepotBackendConformance
import Foundation
import Testing

extension BackendUnderTest {
    /// `AsyncHTTPClientBackend` with a client of its own, as most apps create it.
    static let asyncHTTPClient = BackendUnderTest(
        name: "AsyncHTTPClientBackend",
        transportCode: { fault in
            switch fault {
            // The connection closed before the answer ended: URLError.networkConnectionLost.
            case .closesBeforeAnswering, .closesMidBody: -1005
            // Not HTTP: URLError.badServerResponse.
            case .garbage: -1011
            }
        },
        make: { settings in
            AsyncHTTPClientBackend(
                baseURL: settings.baseURL, headers: settings.headers, timeout: settings.timeout,
                maximumResponseBytes: settings.maximumResponseBytes)
        })
}

/// The shared network suites of DepotBackendConformance (the fault matrix, redirects,
/// authentication and paging over real HTTP), run on `AsyncHTTPClientBackend`: the same
/// functions Depot's own tests run on `URLSessionBackend`.
@Suite(.liveServers) struct AsyncHTTPClientConformanceTests {
    @Test(arguments: FaultMatrix.rows) func faultMatrix(_ row: FaultMatrix.Row) async throws {
        try await FaultMatrix.check(row, on: .asyncHTTPClient)
    }

    @Test(arguments: NetworkConformance.redirects) func redirects(_ check: ConformanceCheck) async throws {
        try await check.run(on: .asyncHTTPClient)
    }

    @Test(arguments: NetworkConformance.authentication) func authentication(_ check: ConformanceCheck)
        async throws
    {
        try await check.run(on: .asyncHTTPClient)
    }

    @Test(arguments: NetworkConformance.paging) func paging(_ check: ConformanceCheck) async throws {
        try await check.run(on: .asyncHTTPClient)
    }

    @Test(arguments: NetworkConformance.transport) func transport(_ check: ConformanceCheck) async throws {
        try await check.run(on: .asyncHTTPClient)
    }

    @Test(arguments: NetworkConformance.live) func live(_ check: ConformanceCheck) async throws {
        try await check.run(on: .asyncHTTPClient)
    }
}
