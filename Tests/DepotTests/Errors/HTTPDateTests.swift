import Foundation
import Testing

@testable import Depot

@Suite("HTTPDate")
struct HTTPDateTests {
    /// Sun, 06 Nov 1994 08:49:37 GMT, the example in RFC 9110 §5.6.7.
    private static let example = Date(timeIntervalSince1970: 784_111_777)

    @Test(
        arguments: [
            "Sun, 06 Nov 1994 08:49:37 GMT",
            "Sunday, 06-Nov-94 08:49:37 GMT",
            "Sun Nov  6 08:49:37 1994",
        ]
    )
    func parsesTheThreeForms(text: String) {
        #expect(HTTPDate.parse(text) == Self.example)
    }

    @Test func parsesTwoDigitDaysInAsctime() {
        #expect(HTTPDate.parse("Wed Nov 16 08:49:37 1994") == Self.example.addingTimeInterval(10 * 86_400))
    }

    @Test func formatsAnIMFFixdate() {
        #expect(HTTPDate.format(Self.example) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(
            HTTPDate.format(Date(timeIntervalSince1970: 1_714_564_800)) == "Wed, 01 May 2024 12:00:00 GMT")
    }

    @Test(arguments: [0, 784_111_777, 1_000_000_000, 1_714_564_800, 4_102_444_799])
    func formatThenParseRoundTrips(seconds: Int) {
        let date = Date(timeIntervalSince1970: TimeInterval(seconds))
        #expect(HTTPDate.parse(HTTPDate.format(date)) == date)
    }

    /// Found by depot-fuzz (target retry-after): Foundation's DateFormatter traps on Linux
    /// ("Incorrect range CFRange") when a parseable date sits next to a combining mark.
    @Test(
        arguments: [
            "S\u{301}un, 06 Nov 1994 08:49:37 GMT", "Sun, 06 Nov 1994 08:49:37 GMT\u{301}",
            "F\u{301}ri, 31 Dec 1999 23:59:59 GMT", "Sun, 06 Nov 1994 08:49:37 GMT\u{0}", "Sun,\t06 Nov 1994",
            "Sun, 06 Nov 1994 08:49:37 GMT" + String(repeating: " ", count: 64),
        ]
    )
    func rejectsNonASCIIAndOverlongText(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }

    @Test func aRetryAfterOrDateWithACombiningMarkIsIgnored() {
        let headers: HTTPHeaders = [
            "Retry-After": "Sun, 06 Nov 1994 08:49:37 GMT\u{301}",
            "Date": "S\u{301}un, 06 Nov 1994 08:49:37 GMT",
        ]
        let response = BackendResponse(status: 503, headers: headers)
        #expect(
            ServiceError(response: response, for: BackendRequest(path: "x"))
                == .serviceUnavailable(FailureResponse(status: 503, headers: headers), retryAfter: nil))
    }

    @Test(arguments: ["", "yesterday", "06 Nov 1994", "1994-11-06T08:49:37Z", "Sun, 06 Nov 1994"])
    func rejectsOtherText(text: String) {
        #expect(HTTPDate.parse(text) == nil)
    }
}
