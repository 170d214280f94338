import Foundation

/// Signs requests with `Authorization: Bearer <token>` and, when the server answers 401,
/// refreshes the token once and sends the request again.
///
/// ```swift
/// let auth = BearerAuthMiddleware(
///     token: { await session.accessToken },
///     refresh: { rejected in try await session.refresh(replacing: rejected) }  // rejected: String?
/// )
/// let backend = URLSessionBackend(baseURL: url).with(.retry(), auth)
/// ```
///
/// Keep one instance per credential set: the refresh is shared through it. When it refreshes
/// and what a second 401 returns: the article *Authentication*.
public final class BearerAuthMiddleware: Middleware {
    private let coordinator: TokenCoordinator

    /// Creates the middleware from the app's token source.
    ///
    /// - Parameters:
    ///   - token: the token to send now, or `nil` for none. A ``ServiceError`` it throws
    ///     is the request's outcome; any other error becomes
    ///     ``ServiceError/invalidRequest(_:)``.
    ///   - refresh: a new token, given the one the server rejected, or `nil` when the
    ///     rejected request was sent without a token.
    public init(
        token: @escaping @Sendable () async throws -> String?,
        refresh: @escaping @Sendable (_ rejected: String?) async throws -> String
    ) {
        self.coordinator = TokenCoordinator(token: token, refresh: refresh)
    }

    /// Sends `request` with the current token (or none); on a 401, once more with a
    /// refreshed one.
    public func intercept(
        _ request: BackendRequest,
        next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        guard !request.headers.contains("Authorization") else { return next(request) }
        let coordinator = coordinator
        return coordinator.token().flatMap { token in
            next(Self.signed(request, with: token)).recover { error in
                guard case .unauthorized = error else { return .failure(error) }
                return coordinator.replacement(for: token)
                    .mapError { $0.error ?? error }
                    .flatMap { fresh in next(Self.signed(request, with: fresh)) }
            }
        }
    }

    private static func signed(_ request: BackendRequest, with token: String?) -> BackendRequest {
        guard let token else { return request }
        var request = request
        request.headers["Authorization"] = "Bearer \(token)"
        return request
    }
}
