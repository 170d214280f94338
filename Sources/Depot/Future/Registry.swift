/// Things held by number until they are taken back: the subscribers, listeners and waiters of
/// the package, each under its owner's lock (one registry, not one `[Int: Handler]` and a
/// counter per owner).
///
/// Numbers are never reused, and ``elements`` and ``removeAll()`` give the elements in the
/// order of their numbers: the order they were added with ``add(_:)``.
package struct Registry<Element> {
    /// The elements with their numbers, in increasing order of number: an array, not a
    /// dictionary, because most registries hold one or a few elements (the callers of one
    /// shared read, a watch's subscription) and an array costs one allocation and no hashing.
    private var entries: [(id: Int, element: Element)] = []
    private var nextID = 0

    /// An empty registry.
    package init() {}

    /// Whether nothing is held.
    package var isEmpty: Bool { entries.isEmpty }

    /// How many elements are held.
    package var count: Int { entries.count }

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

    /// Where the element of number `id` is, or would be inserted to keep the order.
    private func position(of id: Int) -> Int {
        // Elements are most often added last and taken back soon: look at the end first.
        if let last = entries.last?.id, last < id { return entries.count }
        var low = 0
        var high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].id < id { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// The element of number `id`; setting `nil` removes it.
    package subscript(id: Int) -> Element? {
        get {
            let index = position(of: id)
            return index < entries.count && entries[index].id == id ? entries[index].element : nil
        }
        set {
            let index = position(of: id)
            let isHeld = index < entries.count && entries[index].id == id
            switch (newValue, isHeld) {
            case (let element?, true): entries[index].element = element
            case (let element?, false): entries.insert((id, element), at: index)
            case (nil, true): entries.remove(at: index)
            case (nil, false): break
            }
        }
    }

    /// Takes back the element of number `id`, if it is still held.
    @discardableResult
    package mutating func remove(_ id: Int) -> Element? {
        let index = position(of: id)
        guard index < entries.count, entries[index].id == id else { return nil }
        return entries.remove(at: index).element
    }

    /// The numbers held, in increasing order.
    package var ids: [Int] { entries.map(\.id) }

    /// The elements held, in the order of their numbers.
    package var elements: [Element] {
        entries.map(\.element)
    }

    /// Takes back every element, in the order of their numbers.
    package mutating func removeAll() -> [Element] {
        defer { entries = [] }
        return elements
    }
}
