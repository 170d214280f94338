import DepotInMemory
import Foundation
import Testing

@testable import Depot

/// Ten thousand `findByID` at once through one ``InMemoryBackend``: every answer is the
/// post asked for, delivered exactly once. The count and duration are printed (a
/// `load:` line).
@Suite struct InMemoryLoadTests {
    @Test func tenThousandFindByIDThroughOneInMemoryBackend() async throws {
        let backend = InMemoryBackend.jsonPlaceholder()
        let posts = PostRepository(backend: backend)
        let count = 10_000
        let tasks = 16
        let tally = Tally(count: count)
        let clock = ContinuousClock()
        let start = clock.now
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<tasks {
                group.addTask {
                    // Worker w asks for requests w, w + 16, w + 32, ... (post ids 1...100).
                    for index in stride(from: worker, to: count, by: tasks) {
                        let id = index % 100 + 1
                        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                            let first = Locked(true)
                            posts.findByID(id).start { result in
                                tally.record(index, right: result.value?.id == id)
                                let isFirst = first.withLock { first in
                                    defer { first = false }
                                    return first
                                }
                                if isFirst { continuation.resume() }
                            }
                        }
                    }
                }
            }
        }
        await tally.wait(atMost: hangBound)
        let elapsed = start.duration(to: clock.now)
        let summary = tally.summary
        print(
            "load: \(count) findByID through one InMemoryBackend from \(tasks) concurrent tasks:",
            "\(summary.right) right, \(summary.once) completed exactly once, \(summary.more) more than once,",
            "in \(elapsed.formatted(.units(allowed: [.milliseconds])))")
        #expect(summary.once == count && summary.more == 0)
        #expect(summary.right == count)
    }
}
