import Foundation

// Short spellings for the built-in middleware, for `backend.with(...)`:
//
//     backend.with(.logging { print($0) }, .retry(), .headers(["Accept": "application/json"]))

extension Middleware where Self == HeadersMiddleware {
    /// Adds `headers` to every request that lacks them; see ``HeadersMiddleware``.
    public static func headers(_ headers: HTTPHeaders) -> HeadersMiddleware {
        HeadersMiddleware(headers)
    }
}

extension Middleware where Self == RetryMiddleware {
    /// Retries failures that may go away, as `policy` says; see ``RetryMiddleware``.
    public static func retry(_ policy: RetryPolicy = RetryPolicy()) -> RetryMiddleware {
        RetryMiddleware(policy: policy)
    }

    /// Retries failures that may go away, sending a request at most `maxAttempts` times
    /// with the default backoff; see ``RetryPolicy``.
    public static func retry(maxAttempts: Int) -> RetryMiddleware {
        RetryMiddleware(policy: RetryPolicy(maxAttempts: maxAttempts))
    }
}

extension Middleware where Self == BearerAuthMiddleware {
    /// Signs requests with a bearer token and refreshes it once on a 401; `refresh`
    /// receives the rejected token, or `nil` when the request was sent without one. See
    /// ``BearerAuthMiddleware``.
    public static func bearer(
        token: @escaping @Sendable () async throws -> String?,
        refresh: @escaping @Sendable (_ rejected: String?) async throws -> String
    ) -> BearerAuthMiddleware {
        BearerAuthMiddleware(token: token, refresh: refresh)
    }
}

extension Middleware where Self == LoggingMiddleware {
    /// Reports each request to `log`, the secrets `redaction` names masked; see
    /// ``LoggingMiddleware``.
    public static func logging(
        redacting redaction: Redaction = .default, _ log: @escaping @Sendable (LogEvent) -> Void
    ) -> LoggingMiddleware {
        LoggingMiddleware(redacting: redaction, log: log)
    }
}

extension Middleware where Self == CacheMiddleware {
    /// Revalidates `GET`s with stored `ETag` / `Last-Modified` validators and answers a
    /// `304` from the stored body, keeping at most `maxEntries` responses and `maxBytes`
    /// bytes; see ``CacheMiddleware``. Keep the instance to call
    /// ``CacheMiddleware/removeAll()`` later.
    public static func cache(
        maxEntries: Int = 256, maxBytes: Int = 8 << 20, conditionalWrites: Bool = false
    ) -> CacheMiddleware {
        CacheMiddleware(maxEntries: maxEntries, maxBytes: maxBytes, conditionalWrites: conditionalWrites)
    }

    /// A ``CacheMiddleware`` that keeps its responses and validators in `storage`, per
    /// `account` (an app-chosen identifier, never a credential): with DepotOffline's
    /// `OfflineResponseStorage`, revalidation survives a restart. See
    /// ``CacheMiddleware/init(storage:account:conditionalWrites:)``.
    public static func cache(
        storage: any ResponseStorage, account: @escaping @Sendable () -> String,
        conditionalWrites: Bool = false
    ) -> CacheMiddleware {
        CacheMiddleware(storage: storage, account: account, conditionalWrites: conditionalWrites)
    }
}
