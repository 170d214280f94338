import Foundation
import Testing

@testable import Depot

/// Secret names match whatever the case of the name looked up: the same answer whether the
/// small set is searched in place or a large one through a lowercased copy.
@Suite("Redaction: names compared regardless of case")
struct RedactionNameTests {
    @Test("small and large sets, ASCII and non-ASCII names, agree with lowercasing")
    func agreesWithLowercasing() {
        let small = Redaction(headers: ["X-Tenant-Key"], queryItems: ["Pässword", "sig"])
        let large = small.adding(
            headers: Set((0..<20).map { "X-Extra-\($0)" }), queryItems: Set((0..<20).map { "extra\($0)" }))
        #expect(small.headers.count <= 16 && small.queryItems.count <= 16)
        #expect(large.headers.count > 16 && large.queryItems.count > 16)
        let headerNames = [
            "authorization", "AUTHORIZATION", "Authorization", "Set-Cookie", "sEt-CoOkIe", "x-tenant-key",
            "X-TENANT-KEY", "X-Tenant", "X-Tenant-Keys", "Content-Type", "", "Authorizatio\u{0301}n",
            "X-Extra-7", "x-extra-19", "X-Extra-20",
        ]
        let itemNames = ["SIG", "sig", "Sig", "PÄSSWORD", "pässword", "password", "EXTRA3", "extra21", "si"]
        for redaction in [small, large] {
            for name in headerNames {
                #expect(
                    redaction.redacts(header: name) == redaction.headers.contains(name.lowercased()),
                    "\(name)")
            }
            for name in itemNames {
                #expect(
                    redaction.redacts(queryItem: name) == redaction.queryItems.contains(name.lowercased()),
                    "\(name)")
            }
        }
        #expect(small.redacts(header: "SET-COOKIE"))
        #expect(small.redacts(queryItem: "PÄSSWORD"))
        #expect(!small.redacts(header: "X-Extra-7"))
        #expect(large.redacts(header: "X-EXTRA-7"))
    }

    @Test("a stored answer keeps no credential field, whatever its case")
    func storedResponseDropsCredentials() {
        let response = BackendResponse(
            status: 200,
            headers: [
                "SET-COOKIE": "a=1", "Content-Type": "application/json", "authorization": "b",
                "ETag": "\"1\"",
            ],
            body: Data())
        let stored = StoredResponse(response, varying: ["COOKIE": ["c=2"], "Accept": ["*/*"]])
        #expect(stored.response.headers.map(\.name) == ["Content-Type", "ETag"])
        #expect(stored.varying == ["Accept": ["*/*"]])
    }
}
