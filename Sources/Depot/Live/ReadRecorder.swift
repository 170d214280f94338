import Foundation

/// What one run of a watched read asked for: the `GET`s it sent through a ``LiveMiddleware``,
/// each with its answer, and the middleware's change feed, so the watch
/// re-reads when a write touches any of them (see ``LiveWatch``).
///
/// Made by the watch, carried to the middleware in each request's ``RequestContext`` (as
/// ``AnswerReceipt`` is), so that reads made elsewhere at the same time do not record into it.
package final class ReadRecorder: Sendable {
    /// One `GET` of the run.
    package struct Read: Equatable, Sendable {
        /// What the `GET` asked for (``BackendRequest/resource``).
        var resource: RequestResource
        /// The query, encoded.
        var query: String
        /// The answer's status, or the error's description.
        var answer: String
        /// A fingerprint of the answer's body (the watch keeps no copy of the bytes).
        var body = Fingerprint(of: Data())
        /// The answer's header fields; only those paging reads are compared (see
        /// ``pagingFields(of:)``).
        var headers: HTTPHeaders = [:]

        /// The header fields paging reads, which change when a write lands on another page
        /// while this page's body stays the same: `Link`, and names holding `total`, `count`,
        /// `page` or `cursor` (`X-Total-Count`, `X-Next-Page`). Other fields (`Date`, request
        /// ids) change with every answer and are left out.
        static func pagingFields(of headers: HTTPHeaders) -> [HTTPHeaders.Field] {
            headers.filter { field in
                let name = field.name.lowercased()
                return name == "link" || ["total", "count", "page", "cursor"].contains { name.contains($0) }
            }
        }

        /// The same read with the same answer; the header fields are looked at last, when
        /// everything else is equal.
        package static func == (left: Read, right: Read) -> Bool {
            left.resource == right.resource && left.query == right.query && left.answer == right.answer
                && left.body == right.body
                && (left.headers == right.headers
                    || pagingFields(of: left.headers) == pagingFields(of: right.headers))
        }
    }

    private struct Fields {
        var reads: [Read] = []
        /// Most often one: an array, searched by identity, costs less than a dictionary.
        var feeds: [(feed: ChangeFeed, since: Int)] = []
        var consultedStore = false
    }

    private let fields = Locked(Fields())

    package init() {}

    /// Notes a `GET` of `request` answered with `result`, through the middleware of `feed`,
    /// sent when the feed's version was `version`.
    func record(
        _ request: BackendRequest, _ result: Result<BackendResponse, ServiceError>, feed: ChangeFeed,
        since version: Int
    ) {
        var read = Read(
            resource: request.resource,
            query: QueryString.encode(keepingCommas: true, request.query), answer: "")
        switch result {
        case .success(let response):
            read.answer = "\(response.status)"
            read.body = Fingerprint(of: response.body)
            read.headers = response.headers
        case .failure(let error):
            read.answer = "\(error)"
        }
        fields.withLock { fields in
            fields.reads.append(read)
            if let index = fields.feeds.firstIndex(where: { $0.feed === feed }) {
                fields.feeds[index].since = min(fields.feeds[index].since, version)
            } else {
                fields.feeds.append((feed, version))
            }
        }
    }

    /// Notes that a store answered (or found nothing) for ``RequestContext/storedOnly`` without
    /// asking the network: middleware that stores answers calls it.
    package func noteStoreConsulted() {
        fields.withLock { $0.consultedStore = true }
    }

    /// Whether a store honoured ``RequestContext/storedOnly`` (otherwise the answers are the network's).
    var consultedStore: Bool {
        fields.withLock { $0.consultedStore }
    }

    /// What was recorded, read at once: the reads, in the order their answers arrived; the
    /// feeds of the middleware they went through, each with its version when the first of
    /// those reads was sent; whether a store honoured ``RequestContext/storedOnly``.
    var contents: (reads: [Read], feeds: [(feed: ChangeFeed, since: Int)], consultedStore: Bool) {
        fields.withLock { ($0.reads, $0.feeds, $0.consultedStore) }
    }
}

/// 128 bits that tell two bodies apart: their length and two 64-bit multiply-rotate sums over
/// their bytes, eight at a time. Not a defence against a server that crafts collisions (it
/// could only hide its own changes from a watch); fast enough to run over every answer a watch
/// receives (`Data`'s own hash reads only part of the bytes).
struct Fingerprint: Equatable, Sendable {
    private let count: Int
    private let first: UInt64
    private let second: UInt64

    init(of data: Data) {
        var first: UInt64 = 0x9E37_79B9_7F4A_7C15
        var second: UInt64 = 0xC2B2_AE3D_27D4_EB4F
        data.withUnsafeBytes { buffer in
            var index = 0
            let count = buffer.count
            while index + 8 <= count {
                let word = buffer.loadUnaligned(fromByteOffset: index, as: UInt64.self)
                first = (first ^ word) &* 0xFF51_AFD7_ED55_8CCD
                first = (first << 31) | (first >> 33)
                second = (second &+ word) &* 0xC4CE_B9FE_1A85_EC53
                second = (second << 29) | (second >> 35)
                index += 8
            }
            var tail: UInt64 = 0
            var shift: UInt64 = 0
            while index < count {
                tail |= UInt64(buffer[index]) << shift
                shift += 8
                index += 1
            }
            first = (first ^ tail) &* 0xFF51_AFD7_ED55_8CCD
            second = (second &+ tail) &* 0xC4CE_B9FE_1A85_EC53
        }
        self.count = data.count
        self.first = first
        self.second = second
    }
}
