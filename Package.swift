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
        .executableTarget(
            name: "JSONPlaceholder",
            dependencies: ["Depot"],
            path: "Examples/JSONPlaceholder"
        ),
        .testTarget(name: "DepotTests", dependencies: ["Depot"]),
    ],
    swiftLanguageModes: [.v6]
)
