/// Things held by number until they are taken back: the subscribers, listeners and waiters of
/// the package, each under its owner's lock (one registry, not one `[Int: Handler]` and a
/// counter per owner).
///
/// Numbers are never reused, and ``elements`` and ``removeAll()`` give the elements in the
/// order of their numbers: the order they were added with ``add(_:)``.
package struct Registry<Element> {
    private var byID: [Int: Element] = [:]
    private var nextID = 0

    /// An empty registry.
    package init() {}

    /// Whether nothing is held.
    package var isEmpty: Bool { byID.isEmpty }

    /// How many elements are held.
    package var count: Int { byID.count }

    /// Holds `element`; returns its number, for ``remove(_:)``.
    package mutating func add(_ element: Element) -> Int {
        let id = reserveID()
        byID[id] = element
        return id
    }

    /// A number no element has had, for an element added later with `registry[id] = element`
    /// (when the number must be known first: to take the element back from a cancellation
    /// handler, say).
    package mutating func reserveID() -> Int {
        defer { nextID += 1 }
        return nextID
    }

    /// The element of number `id`; setting `nil` removes it.
    package subscript(id: Int) -> Element? {
        get { byID[id] }
        set { byID[id] = newValue }
    }

    /// Takes back the element of number `id`, if it is still held.
    @discardableResult
    package mutating func remove(_ id: Int) -> Element? {
        byID.removeValue(forKey: id)
    }

    /// The numbers held, in increasing order.
    package var ids: [Int] { byID.keys.sorted() }

    /// The elements held, in the order of their numbers.
    package var elements: [Element] {
        byID.isEmpty ? [] : byID.sorted { $0.key < $1.key }.map(\.value)
    }

    /// Takes back every element, in the order of their numbers.
    package mutating func removeAll() -> [Element] {
        defer { byID = [:] }
        return elements
    }
}
