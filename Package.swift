// swift-tools-version: 6.0
import PackageDescription

let package = Package(
    name: "Depot",
    platforms: [.macOS(.v13), .iOS(.v16), .tvOS(.v16), .watchOS(.v9)],
    products: [
        .library(name: "Depot", targets: ["Depot"])
    ],
    targets: [
        .target(name: "Depot"),
        // Generated JSONPlaceholder-shaped data for the examples, tests and benchmarks.
        .target(name: "DepotFixtures"),
        .executableTarget(
            name: "JSONPlaceholder",
            dependencies: ["Depot", "DepotFixtures"],
            path: "Examples/JSONPlaceholder"
        ),
        .executableTarget(name: "AcmeFlix", dependencies: ["Depot"], path: "Examples/AcmeFlix"),
        // Depot next to the code a user would write by hand: `swift run -c release depot-benchmarks`
        // (`bash scripts/bench` for the network cases).
        .executableTarget(
            name: "depot-benchmarks",
            dependencies: ["Depot", "DepotFixtures"],
            path: "Benchmarks/DepotBenchmarks"
        ),
        // A seeded, bounded mutation fuzzer (not a product): `swift run -c release --scratch-path
        // .build/release-bench depot-fuzz --seconds 45 --seed 1`; see Tests/Fuzz/README.md.
        .executableTarget(
            name: "depot-fuzz",
            dependencies: ["Depot"],
            path: "Tests/Fuzz",
            exclude: ["Corpus", "README.md"]
        ),
        .testTarget(name: "DepotTests", dependencies: ["Depot", "DepotFixtures"]),
    ],
    swiftLanguageModes: [.v6]
)
