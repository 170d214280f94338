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
        .testTarget(name: "DepotTests", dependencies: ["Depot", "DepotFixtures"]),
    ],
    swiftLanguageModes: [.v6]
)
