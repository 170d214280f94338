/// A least-recently-used store bounded by its number of entries and by their total cost
/// (bytes, for ``InMemoryResponseStorage``).
///
/// Lookups, insertions and removals by key are O(1): entries live in an array of slots
/// linked into a recency list by index, with a dictionary from key to slot. Removing by
/// a predicate is O(n). Not thread-safe on its own: ``InMemoryResponseStorage`` keeps it in a
/// `Locked`.
struct LRUStore<Key: Hashable, Value> {
    private struct Slot {
        var key: Key
        var value: Value
        var cost: Int
        /// The next more recently used slot, or -1.
        var newer: Int
        /// The next less recently used slot, or -1.
        var older: Int
    }

    /// The most entries kept.
    let maxCount: Int
    /// The largest total cost kept.
    let maxCost: Int

    private var slots: [Slot?] = []
    private var freeSlots: [Int] = []
    private var index: [Key: Int] = [:]
    /// The most recently used slot, or -1.
    private var newest = -1
    /// The least recently used slot, or -1.
    private var oldest = -1
    /// The sum of the costs of the entries kept.
    private(set) var totalCost = 0

    /// An empty store; negative bounds count as zero (a store that keeps nothing).
    init(maxCount: Int, maxCost: Int) {
        self.maxCount = max(0, maxCount)
        self.maxCost = max(0, maxCost)
    }

    /// How many entries are kept.
    var count: Int { index.count }

    /// The value for `key`, which becomes the most recently used; `nil` when absent.
    mutating func value(for key: Key) -> Value? {
        guard let slot = index[key] else { return nil }
        moveToFront(slot)
        return slots[slot]?.value
    }

    /// The value for `key` without changing its recency.
    func peek(_ key: Key) -> Value? {
        index[key].flatMap { slots[$0]?.value }
    }

    /// Keeps `value` for `key` as the most recently used entry, replacing any value
    /// there, then evicts the least recently used entries until both bounds hold.
    ///
    /// A value whose cost alone exceeds ``maxCost`` is not kept (and the old value for
    /// `key` is removed). Returns how many other entries were evicted.
    @discardableResult
    mutating func insert(_ value: Value, cost: Int, for key: Key) -> Int {
        removeValue(for: key)
        let cost = max(0, cost)
        guard maxCount > 0, cost <= maxCost else { return 0 }
        let entry = Slot(key: key, value: value, cost: cost, newer: -1, older: newest)
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            slots[slot] = entry
        } else {
            slot = slots.count
            slots.append(entry)
        }
        if newest >= 0 { slots[newest]?.newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
        index[key] = slot
        totalCost += cost
        var evicted = 0
        while count > maxCount || totalCost > maxCost, oldest >= 0, oldest != slot {
            unlink(oldest)
            evicted += 1
        }
        return evicted
    }

    /// Removes the value for `key` and returns it.
    @discardableResult
    mutating func removeValue(for key: Key) -> Value? {
        guard let slot = index[key] else { return nil }
        return unlink(slot)
    }

    /// Removes every entry whose key satisfies `predicate` (O(n)); returns how many.
    @discardableResult
    mutating func removeAll(where predicate: (Key) -> Bool) -> Int {
        let doomed = index.filter { predicate($0.key) }
        for slot in doomed.values { unlink(slot) }
        return doomed.count
    }

    /// Removes every entry.
    mutating func removeAll() {
        slots = []
        freeSlots = []
        index = [:]
        newest = -1
        oldest = -1
        totalCost = 0
    }

    #if DEBUG
        /// The keys from the most to the least recently used: for the tests of the order,
        /// compiled out of release builds.
        var keysByRecency: [Key] {
            var keys: [Key] = []
            var slot = newest
            while slot >= 0, let entry = slots[slot] {
                keys.append(entry.key)
                slot = entry.older
            }
            return keys
        }
    #endif

    private mutating func moveToFront(_ slot: Int) {
        guard slot != newest, let entry = slots[slot] else { return }
        // Detach: slot is not the newest, so it has a newer neighbour.
        if entry.newer >= 0 { slots[entry.newer]?.older = entry.older }
        if entry.older >= 0 { slots[entry.older]?.newer = entry.newer }
        if oldest == slot { oldest = entry.newer }
        // Attach at the front.
        slots[slot]?.older = newest
        slots[slot]?.newer = -1
        if newest >= 0 { slots[newest]?.newer = slot }
        newest = slot
    }

    @discardableResult
    private mutating func unlink(_ slot: Int) -> Value? {
        guard let entry = slots[slot] else { return nil }
        if entry.newer >= 0 { slots[entry.newer]?.older = entry.older } else { newest = entry.older }
        if entry.older >= 0 { slots[entry.older]?.newer = entry.newer } else { oldest = entry.newer }
        slots[slot] = nil
        freeSlots.append(slot)
        index[entry.key] = nil
        totalCost -= entry.cost
        return entry.value
    }
}
