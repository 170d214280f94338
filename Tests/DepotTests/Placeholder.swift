import Testing

@testable import Depot

@Test func placeholder() { #expect(HTTPMethod(name: "get") == .get) }
