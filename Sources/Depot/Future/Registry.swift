/// Things held by number until they are taken back: the subscribers, listeners and waiters of
/// the package, each under its owner's lock (one registry, not one `[Int: Handler]` and a
/// counter per owner).
///
/// Numbers are never reused, and ``elements`` and ``removeAll()`` give the elements in the
/// order of their numbers: the order they were added with ``add(_:)``.
package struct Registry<Element> {
    /// The elements with their numbers, in increasing order of number; a taken-back element
    /// leaves a hole (`nil`) until holes are at least half of the array. An array, not a dictionary:
    /// most registries hold one or a few elements (the callers of one shared read, a watch's
    /// subscription), and an array costs one allocation and no hashing, while a take-back
    /// from thousands (a feed's subscribers) stays a binary search, not a shift of the rest.
    private var entries: [(id: Int, element: Element?)] = []
    /// How many entries are holes.
    private var holes = 0
    private var nextID = 0

    /// An empty registry.
    package init() {}

    /// Whether nothing is held.
    package var isEmpty: Bool { count == 0 }

    /// How many elements are held.
    package var count: Int { entries.count - holes }

    /// Holds `element`; returns its number, for ``remove(_:)``.
    package mutating func add(_ element: Element) -> Int {
        let id = reserveID()
        entries.append((id, element))
        return id
    }

    /// A number no element has had, for an element added later with `registry[id] = element`
    /// (when the number must be known first: to take the element back from a cancellation
    /// handler, say).
    package mutating func reserveID() -> Int {
        defer { nextID += 1 }
        return nextID
    }

    /// Where the entry of number `id` is, or would be inserted to keep the order.
    private func position(of id: Int) -> Int {
        // Elements are most often added last: look at the end first.
        if let last = entries.last?.id, last < id { return entries.count }
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The element of number `id`; setting `nil` removes it. Only numbers given by ``add(_:)``
    /// or ``reserveID()`` may be set.
    package subscript(id: Int) -> Element? {
        get {
            let index = position(of: id)
            return index < entries.count && entries[index].id == id ? entries[index].element : nil
        }
        set {
            precondition(id < nextID, "Registry: number \(id) was never given out")
            let index = position(of: id)
            guard index < entries.count, entries[index].id == id else {
                if let newValue { entries.insert((id, newValue), at: index) }
                return
            }
            switch (entries[index].element == nil, newValue == nil) {
            case (true, false): holes -= 1
            case (false, true): holes += 1
            default: break
            }
            entries[index].element = newValue
            compactIfHalfHoles()
        }
    }

    /// Takes back the element of number `id`, if it is still held.
    @discardableResult
    package mutating func remove(_ id: Int) -> Element? {
        let index = position(of: id)
        guard index < entries.count, entries[index].id == id, let element = entries[index].element else {
            return nil
        }
        entries[index].element = nil
        holes += 1
        compactIfHalfHoles()
        return element
    }

    /// Drops the holes once they are at least half of the entries (amortized: each hole is
    /// dropped once).
    private mutating func compactIfHalfHoles() {
        guard holes > 0, holes * 2 >= entries.count else { return }
        entries.removeAll { $0.element == nil }
        holes = 0
    }

    /// The numbers held, in increasing order.
    package var ids: [Int] { entries.compactMap { $0.element == nil ? nil : $0.id } }

    /// The elements held, in the order of their numbers.
    package var elements: [Element] {
        entries.compactMap(\.element)
    }

    /// Takes back every element, in the order of their numbers.
    package mutating func removeAll() -> [Element] {
        defer {
            entries = []
            holes = 0
        }
        return elements
    }
}
