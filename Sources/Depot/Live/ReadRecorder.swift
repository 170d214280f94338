import Foundation

/// What one run of a watched read asked for: the `GET`s it sent through a ``LiveMiddleware``,
/// each with its answer, and the middleware's change feed, so the watch
/// re-reads when a write touches any of them (see ``LiveWatch``).
///
/// Made by the watch, carried to the middleware as a task-local value (as ``AnswerReceipt``
/// is), so that reads made elsewhere at the same time do not record into it.
package final class ReadRecorder: Sendable {
    /// One `GET` of the run.
    package struct Read: Hashable, Sendable {
        /// The path without query or surrounding `/` (``StoredResponseKey/resource(of:)``).
        var resource: String
        /// The query, encoded.
        var query: String
        /// The answer's status, or the error's description.
        var answer: String
        /// The answer's body: compared whole, since `Data`'s hash reads only part of it.
        var body = Data()
        /// The answer's paging header fields (see ``pagingFields(of:)``).
        var paging: [HTTPHeaders.Field] = []

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
    }

    private struct Fields {
        var reads: [Read] = []
        var feeds: [ObjectIdentifier: (feed: ChangeFeed, since: Int)] = [:]
        var consultedStore = false
    }

    private let fields = Locked(Fields())

    /// The recorder of the run being made now, if it is a watched one.
    @TaskLocal package static var current: ReadRecorder?
    /// Whether the run wants only answers already stored (the first snapshot of a watch):
    /// middleware that stores answers serves one without asking the network, or fails with
    /// ``ServiceError/noConnection``.
    @TaskLocal package static var storedOnly = false

    package init() {}

    /// Notes a `GET` of `request` answered with `result`, through the middleware of `feed`,
    /// sent when the feed's version was `version`.
    func record(
        _ request: BackendRequest, _ result: Result<BackendResponse, ServiceError>, feed: ChangeFeed,
        since version: Int
    ) {
        var read = Read(
            resource: StoredResponseKey.resource(of: request.path),
            query: QueryString.encode(keepingCommas: true, request.query), answer: "")
        switch result {
        case .success(let response):
            read.answer = "\(response.status)"
            read.body = response.body
            read.paging = Read.pagingFields(of: response.headers)
        case .failure(let error):
            read.answer = "\(error)"
        }
        fields.withLock { fields in
            fields.reads.append(read)
            let since = fields.feeds[ObjectIdentifier(feed)].map { min($0.since, version) } ?? version
            fields.feeds[ObjectIdentifier(feed)] = (feed, since)
        }
    }

    /// Notes that a store answered (or found nothing) for ``storedOnly`` without asking the
    /// network: middleware that stores answers calls it.
    package func noteStoreConsulted() {
        fields.withLock { $0.consultedStore = true }
    }

    /// Whether a store honoured ``storedOnly`` (otherwise the answers are the network's).
    var consultedStore: Bool {
        fields.withLock { $0.consultedStore }
    }

    /// The reads recorded, in the order their answers arrived.
    package var reads: [Read] {
        fields.withLock { $0.reads }
    }

    /// The feeds of the middleware the reads went through, each with its version when the
    /// first of those reads was sent.
    var feeds: [(feed: ChangeFeed, since: Int)] {
        fields.withLock { Array($0.feeds.values) }
    }
}
