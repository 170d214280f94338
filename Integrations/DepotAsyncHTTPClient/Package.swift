// swift-tools-version: 6.0
import PackageDescription

// Depot on AsyncHTTPClient (SwiftNIO), for servers: a package of its own, so that the root
// package keeps no package dependencies and apps that do not use it never resolve SwiftNIO.
let package = Package(
    name: "DepotAsyncHTTPClient",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "DepotAsyncHTTPClient", targets: ["DepotAsyncHTTPClient"])
    ],
    dependencies: [
        // The repository root, whatever its folder is called.
        .package(name: "Depot", path: "../.."),
        .package(url: "https://github.com/swift-server/async-http-client.git", from: "1.37.0"),
        .package(url: "https://github.com/apple/swift-nio.git", from: "2.100.0"),
    ],
    targets: [
        .target(
            name: "DepotAsyncHTTPClient",
            dependencies: [
                .product(name: "Depot", package: "Depot"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // The root package's backend-agnostic network suites, run on AsyncHTTPClientBackend.
        .testTarget(
            name: "DepotAsyncHTTPClientTests",
            dependencies: [
                "DepotAsyncHTTPClient",
                .product(name: "Depot", package: "Depot"),
                .product(name: "DepotBackendConformance", package: "Depot"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
                .product(name: "NIOConcurrencyHelpers", package: "swift-nio"),
            ]
        ),
        // Depot on AsyncHTTPClient next to hand-written AsyncHTTPClient and URLSession:
        // `bash scripts/bench --ahc` (from the repository's root).
        .executableTarget(
            name: "depot-ahc-benchmarks",
            dependencies: [
                "DepotAsyncHTTPClient",
                .product(name: "Depot", package: "Depot"),
                .product(name: "AsyncHTTPClient", package: "async-http-client"),
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOPosix", package: "swift-nio"),
            ],
            path: "Benchmarks/AHCBenchmarks"
        ),
    ],
    swiftLanguageModes: [.v6]
)
