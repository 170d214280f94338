// swift-tools-version: 6.0
import PackageDescription

// SQLite for DepotOffline is the system's: on Linux found through pkg-config (`libsqlite3-dev`,
// which `bash scripts/test` installs where missing); on Apple platforms the SDK's, linked as is.
#if os(Linux)
    let sqlitePkgConfig: String? = "sqlite3"
#else
    let sqlitePkgConfig: String? = nil
#endif

let package = Package(
    name: "Depot",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Depot", targets: ["Depot"]),
        // InMemoryBackend (json-server in process), its routes and faults, and JSONPlaceholder-shaped
        // fixtures, for an app's tests and previews: `import DepotInMemory`.
        .library(name: "DepotInMemory", targets: ["DepotInMemory"]),
        // Reads and writes that survive the network, stored in SQLite: `import DepotOffline`.
        .library(name: "DepotOffline", targets: ["DepotOffline"]),
        // The backend-agnostic network suites (fault matrix, redirects, auth, paging), for the
        // test target of any Backend: `import DepotBackendConformance` (it imports Testing).
        .library(name: "DepotBackendConformance", targets: ["DepotBackendConformance"]),
    ],
    targets: [
        .target(name: "Depot"),
        // The json-server query engine (JSON reader and writer, filters, sort, full text, page
        // windows, write rules): not a product; InMemoryBackend and DepotOffline's overlay share it.
        .target(name: "JSONServerEngine", dependencies: ["Depot"]),
        .target(name: "DepotInMemory", dependencies: ["Depot", "JSONServerEngine"]),
        // The system's SQLite (a system library, not a package dependency).
        .systemLibrary(name: "CSQLite", pkgConfig: sqlitePkgConfig, providers: [.apt(["libsqlite3-dev"])]),
        .target(name: "DepotOffline", dependencies: ["Depot", "JSONServerEngine", "CSQLite"]),
        // The network suites every backend passes, parameterized by a backend factory; run by
        // DepotTests on URLSessionBackend and by Integrations/DepotAsyncHTTPClient on its backend.
        .target(name: "DepotBackendConformance", dependencies: ["Depot"]),
        .executableTarget(
            name: "JSONPlaceholder",
            dependencies: ["Depot", "DepotInMemory"],
            path: "Examples/JSONPlaceholder"
        ),
        .executableTarget(
            name: "AcmeFlix", dependencies: ["Depot", "DepotInMemory"], path: "Examples/AcmeFlix"),
        // Reads and writes that survive the network: `swift run OfflineDemo`.
        .executableTarget(
            name: "OfflineDemo",
            dependencies: ["Depot", "DepotOffline", "DepotInMemory"],
            path: "Examples/OfflineDemo"
        ),
        // A list watched while another task writes: `swift run LiveDemo`.
        .executableTarget(
            name: "LiveDemo",
            dependencies: ["Depot", "DepotInMemory"],
            path: "Examples/LiveDemo"
        ),
        // Depot next to the code a user would write by hand: `swift run -c release depot-benchmarks`
        // (`bash scripts/bench` for the network cases).
        .executableTarget(
            name: "depot-benchmarks",
            dependencies: ["Depot", "DepotOffline", "DepotInMemory"],
            path: "Benchmarks/DepotBenchmarks"
        ),
        // A seeded, bounded mutation fuzzer (not a product): `swift run -c release --scratch-path
        // .build/release-bench depot-fuzz --seconds 45 --seed 1`; see Tests/Fuzz/README.md.
        .executableTarget(
            name: "depot-fuzz",
            dependencies: ["Depot", "DepotInMemory"],
            path: "Tests/Fuzz",
            exclude: ["Corpus", "README.md"]
        ),
        // The child of the crash-safety test (not a product): queues writes in an OfflineStore until
        // CrashSafetyTests kills it with SIGKILL; see Tests/CrashSafety/README.md.
        .executableTarget(
            name: "depot-offline-crash",
            dependencies: ["Depot", "DepotOffline"],
            path: "Tests/CrashSafety",
            exclude: ["README.md"]
        ),
        // InMemoryBackend driven by lines on stdin, for the random differential against a real
        // json-server (not a product): see Tests/Differential/README.md.
        .executableTarget(
            name: "depot-inmemory-replay",
            dependencies: ["Depot", "DepotInMemory"],
            path: "Tests/Differential",
            exclude: ["README.md", "differential.py"]
        ),
        .testTarget(
            name: "DepotTests",
            dependencies: ["Depot", "DepotInMemory", "JSONServerEngine", "DepotBackendConformance"]),
        .testTarget(
            name: "DepotOfflineTests",
            // The crash-safety test runs the child, so a test build builds it too.
            dependencies: ["DepotOffline", "Depot", "DepotInMemory", "CSQLite", "depot-offline-crash"]
        ),
    ],
    swiftLanguageModes: [.v6]
)
