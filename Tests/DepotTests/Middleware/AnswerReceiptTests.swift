import DepotInMemory
import Foundation
import Testing

@testable import Depot

/// A middleware that says every answer came from storage, saved at `savedAt`.
private struct PretendStored: Middleware {
    let savedAt: Date

    func intercept(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        let receipt = request.context.receipt
        return next(request).map { response in
            receipt?.record(.stored(savedAt: savedAt))
            return response
        }
    }
}

@Suite("AnswerReceipt")
struct AnswerReceiptTests {
    let server: InMemoryBackend

    init() {
        server = InMemoryBackend()
        server.route(.get, "x") { _ throws(ServiceError) in BackendResponse(status: 200) }
    }

    @Test func anEmptyReceiptSaysNetwork() {
        #expect(AnswerReceipt().source == .network)
        #expect(BackendRequest(path: "x").context.receipt == nil)
    }

    @Test func keepsTheOldestStoredAnswer() async {
        let old = Date(timeIntervalSince1970: 1_000)
        let new = Date(timeIntervalSince1970: 2_000)
        let receipt = AnswerReceipt()

        await receipt.collect {
            _ = await server.with(PretendStored(savedAt: new)).send(BackendRequest(path: "x")).result
            _ = await server.with(PretendStored(savedAt: old)).send(BackendRequest(path: "x")).result
            _ = await server.send(BackendRequest(path: "x")).result
        }

        #expect(receipt.source == .stored(savedAt: old))
    }

    @Test func concurrentCallsFillTheirOwnReceipts() async {
        let stored = AnswerReceipt()
        let fresh = AnswerReceipt()
        let savedAt = Date(timeIntervalSince1970: 5)

        async let first: Void = stored.collect {
            _ = await server.with(PretendStored(savedAt: savedAt)).send(BackendRequest(path: "x")).result
        }
        async let second: Void = fresh.collect { _ = await server.send(BackendRequest(path: "x")).result }
        _ = await (first, second)

        #expect(stored.source == .stored(savedAt: savedAt))
        #expect(fresh.source == .network)
    }

    @Test func aFutureStartedInsideCollectReportsToIt() async {
        let receipt = AnswerReceipt()
        let savedAt = Date(timeIntervalSince1970: 7)
        let backend = server.with(PretendStored(savedAt: savedAt))

        let source = await firstDelivery { (deliver: @escaping @Sendable (AnswerSource) -> Void) in
            _ = receipt.collectStarts {
                backend.send(BackendRequest(path: "x")).start { _ in deliver(receipt.source) }
            }
        }

        #expect(source == .stored(savedAt: savedAt))
    }

    @Test("the receipt rides on the request: a middleware that resumes it on another queue keeps it")
    func aMiddlewareOnAnotherQueueKeepsTheReceipt() async {
        let receipt = AnswerReceipt()
        let savedAt = Date(timeIntervalSince1970: 9)
        let backend = server.with(Hop(), PretendStored(savedAt: savedAt))

        _ = await receipt.collect { await backend.send(BackendRequest(path: "x")).result }

        #expect(receipt.source == .stored(savedAt: savedAt))
    }

    @Test("a request made outside collect reports to no receipt, wherever it is started")
    func aRequestMadeOutsideReportsToNone() async {
        let receipt = AnswerReceipt()
        let request = BackendRequest(path: "x")
        let backend = server.with(PretendStored(savedAt: Date(timeIntervalSince1970: 3)))

        _ = await receipt.collect { await backend.send(request).result }

        #expect(receipt.source == .network)
    }
}

/// An app's own middleware that passes each request on from another queue, a moment later.
private struct Hop: Middleware {
    func intercept(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        Future { promise in
            let work = SerialCancellable()
            DispatchQueue(label: "hop").asyncAfter(deadline: .now() + .milliseconds(5)) {
                work.set(next(request).start { promise($0) })
            }
            return work
        }
    }
}
