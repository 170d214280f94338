import Depot
import Foundation
import Testing

/// The live servers `bash scripts/test` starts, read from the environment.
///
/// Plain `swift test` has none of these variables, and the tests that need them are
/// skipped with ``Trait/liveServers``'s message.
public enum LiveServer {
    /// httpbin (PyPI `httpbin` under gunicorn), e.g. `http://127.0.0.1:50001`.
    public static let httpbin = url("DEPOT_HTTPBIN_URL")
    /// A second httpbin on another port: another origin, for cross-origin redirects.
    public static let httpbin2 = url("DEPOT_HTTPBIN2_URL")
    /// The Django REST framework app of Tests/Servers/ (JSONPlaceholder's data).
    public static let drf = url("DEPOT_DRF_URL")
    /// The fault server of scripts/servers/fault_server.py: answers cut short, closed
    /// connections, garbage, silence, slow drips and endless bodies (its docstring lists
    /// the routes).
    public static let fault = url("DEPOT_FAULT_URL")
    /// A port on 127.0.0.1 where nothing listens.
    public static let closed = url("DEPOT_CLOSED_URL")

    /// Whether every server is configured.
    public static var isAvailable: Bool {
        httpbin != nil && httpbin2 != nil && drf != nil && fault != nil && closed != nil
    }

    /// The DRF app's base URL for a private copy of the seed data (`/s/<fresh name>/`),
    /// for tests that write: it starts with 10 users, 100 posts and 500 comments, and
    /// nothing else sees it.
    public static func drfSpace() throws -> URL {
        let base = try #require(drf)
        let name = "t" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "")
        return try #require(URL(string: base.absoluteString + "/s/" + name + "/"))
    }

    private static func url(_ name: String) -> URL? {
        guard let value = ProcessInfo.processInfo.environment[name], !value.isEmpty else { return nil }
        return URL(string: value)
    }
}

extension Trait where Self == ConditionTrait {
    /// Runs the test only when `bash scripts/test` started the live servers.
    public static var liveServers: Self {
        .enabled(
            if: LiveServer.isAvailable,
            "needs the live test servers: run `bash scripts/test` (it starts httpbin, the DRF app and the fault server)"
        )
    }
}
