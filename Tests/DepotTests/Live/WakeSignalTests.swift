import Testing

@testable import Depot

@Suite("WakeSignal: what wakes a watch's iteration", .timeLimit(.minutes(1)))
struct WakeSignalTests {
    @Test("a signal given while nobody waits is kept: the next wait returns at once")
    func keepsASignal() async {
        let signal = WakeSignal()
        signal.signal()
        #expect(await signal.wait())
        signal.signal()
        signal.signal()
        #expect(await signal.wait())
    }

    @Test("a signal wakes the iteration that waits")
    func wakesTheWaiter() async {
        let signal = WakeSignal()
        let waiting = Task { await signal.wait() }
        // Signalled before or after the task waits, the wait ends with `true`.
        signal.signal()
        #expect(await waiting.value)
    }

    @Test("cancelling the waiting task ends the wait and the signal: later waits return false")
    func cancellingEnds() async {
        let signal = WakeSignal()
        let waiting = Task { await signal.wait() }
        waiting.cancel()
        #expect(await waiting.value == false)
        signal.signal()
        #expect(await signal.wait() == false)
    }

    @Test("finish() wakes the iteration that waits with false")
    func finishWakes() async {
        let signal = WakeSignal()
        let waiting = Task { await signal.wait() }
        signal.finish()
        #expect(await waiting.value == false)
    }
}
