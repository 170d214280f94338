/// A step between a repository and a backend that can change the request, send it again, or
/// change the outcome: auth, retry, logging, caching (the article *Using Middleware*).
///
/// ```swift
/// struct APIVersion: Middleware {
///     func intercept(
///         _ request: BackendRequest,
///         next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
///     ) -> Future<BackendResponse, ServiceError> {
///         var request = request
///         request.headers["API-Version"] = "2"
///         return next(request)
///     }
/// }
/// ```
public protocol Middleware: Sendable {
    /// Handles `request`, usually by calling `next` (the rest of the chain) once or
    /// more, and returns the outcome.
    func intercept(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError>
}

extension Backend {
    /// This backend behind `middleware`; the first one listed sees the request first
    /// and the outcome last.
    ///
    /// ```swift
    /// let backend = InMemoryBackend().with(HeadersMiddleware(["X-Client": "demo"]), logging)
    /// ```
    public func with(_ middleware: any Middleware...) -> any Backend {
        with(middleware)
    }

    /// This backend behind each of `middleware`, the first outermost.
    public func with(_ middleware: [any Middleware]) -> any Backend {
        middleware.reversed().reduce(self as any Backend) { inner, step in
            (step as? any ChainAttached)?.attach(to: inner)
            return MiddlewareBackend(middleware: step, next: inner)
        }
    }
}

/// A backend that runs one middleware in front of another backend.
struct MiddlewareBackend: Backend {
    let middleware: any Middleware
    let next: any Backend

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        middleware.intercept(request, next: next.send)
    }
}

/// A middleware that learns the chain behind it once, when ``Backend/with(_:)-(any Middleware...)``
/// puts it in front of that chain, instead of from the requests that pass: DepotOffline's
/// middleware fixes the chain its store's replays go through; ``LiveMiddleware`` subscribes to
/// the stores behind it that report changes of their own.
package protocol ChainAttached: Middleware {
    /// Called once each time this middleware is put in front of `next`.
    func attach(to next: any Backend)
}

/// A middleware whose store changes what reads answer without a request passing through the
/// chain in front of it (DepotOffline's replays: sent, created, rolled back). A
/// ``LiveMiddleware`` in front of it subscribes when the chain is made.
package protocol ChangeSource: Middleware {
    /// The store the changes come from: two middleware of one store report the same changes.
    var changeSource: AnyObject { get }

    /// Calls `publish` with what each such change touched, on no lock of the store's, until the
    /// returned subscription is cancelled or released.
    func subscribeChanges(_ publish: @escaping @Sendable (ChangeFeed.Publication) -> Void)
        -> ChangeFeed.Subscription
}

extension Backend {
    /// The middleware of this chain, outermost first, as far as it is made of middleware
    /// in front of a backend.
    package var middlewareChain: [any Middleware] {
        var chain: [any Middleware] = []
        var backend: any Backend = self
        while true {
            if let layer = backend as? MiddlewareBackend {
                chain.append(layer.middleware)
                backend = layer.next
            } else if let host = backend as? any MiddlewareHost {
                backend = host.hostedChain
            } else {
                return chain
            }
        }
    }
}

/// A backend that runs a chain of middleware of its own (``URLSessionBackend``'s and
/// AsyncHTTPClientBackend's `middleware:`): a ``LiveMiddleware`` put in front of it looks
/// through it for the stores whose replays it reports. A backend of your own that takes
/// middleware adopts it the same way.
@_spi(BackendSupport)
public protocol MiddlewareHost: Backend {
    /// The chain the backend sends its requests through: `transport.with(middleware)`.
    var hostedChain: any Backend { get }
}
