// The few SwiftUI names that the documentation's blocks use, declared where SwiftUI does not
// exist (Linux), so that those blocks still type-check against Depot there: a mistake in how
// they use Depot fails `bash scripts/snippets` on every platform. On Apple platforms the real
// SwiftUI is imported instead and this file declares nothing. scripts/snippets.py adds it to a
// target whose blocks `import SwiftUI`.
#if !canImport(SwiftUI)
    @MainActor protocol View {
        associatedtype Body: View
        @ViewBuilder var body: Body { get }
    }

    /// A view with no body of its own.
    protocol PrimitiveView: View where Body == Never {}

    extension PrimitiveView {
        var body: Never { fatalError("a stand-in view has no body") }
    }

    extension Never: View {
        var body: Never { fatalError("a stand-in view has no body") }
    }

    @resultBuilder enum ViewBuilder {
        static func buildBlock<Content: View>(_ content: Content) -> Content { content }
        static func buildBlock<each Content: View>(_ content: repeat each Content) -> Group<
            (repeat each Content)
        > {
            Group()
        }
        static func buildOptional<Content: View>(_ content: Content?) -> Group<Content?> { Group() }
    }

    struct Group<Content>: PrimitiveView {}
    struct Text: PrimitiveView { init(_ text: String) {} }
    struct VStack<Content: View>: PrimitiveView { init(@ViewBuilder content: () -> Content) {} }
    struct Button: PrimitiveView { init(_ title: String, action: @escaping @MainActor () -> Void) {} }

    struct List<Row: View>: PrimitiveView {
        init<Data: RandomAccessCollection>(
            _ data: Data, @ViewBuilder rowContent: @escaping (Data.Element) -> Row
        )
        where Data.Element: Identifiable {}
    }

    extension View {
        func opacity(_ opacity: Double) -> Group<Self> { Group() }
        func refreshable(action: @escaping @Sendable () async -> Void) -> Group<Self> { Group() }
    }

    @propertyWrapper struct State<Value> {
        var wrappedValue: Value
        init(wrappedValue: Value) { self.wrappedValue = wrappedValue }
        init(initialValue: Value) { self.wrappedValue = initialValue }
    }
#endif
