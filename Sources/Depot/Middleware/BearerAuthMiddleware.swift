import Foundation

/// Signs requests with `Authorization: Bearer <token>` and, when the server answers 401,
/// refreshes the token once and sends the request again.
///
/// - `token` gives the token for each request (from a keychain, a token store actor);
///   `nil` sends the request without `Authorization`.
/// - `refresh` gets a new token after the server answered 401, and should store it where
///   `token` reads it. It receives the token the server rejected, or `nil` when the
///   request went out without one: an app that starts signed out but holds a refresh
///   credential, or fetches its first access token lazily, gets that token there (and
///   throws when it has no way to get one). It runs once for all the requests that meet a
///   401 at the same time, with a token or without: they, and new requests started
///   meanwhile, wait for that one refresh. A request that was rejected with a token an
///   earlier refresh already replaced (or sent without a token while another request got
///   one) is sent again with the new token, without refreshing again.
/// - A 401 on the replayed request is returned as ``ServiceError/unauthorized(_:challenges:)``:
///   the credentials are really refused. So is a 401 when `refresh` fails, unless it
///   throws a ``ServiceError`` (a `.noConnection`, say), which is returned instead, so an
///   app logs its user out only when the server really says no.
///
/// A request that already carries an `Authorization` field (a Basic one to the token
/// endpoint, say) is sent untouched.
///
/// ```swift
/// let auth = BearerAuthMiddleware(
///     token: { await session.accessToken },
///     refresh: { rejected in try await session.refresh(replacing: rejected) }  // rejected: String?
/// )
/// let backend = URLSessionBackend(baseURL: url).with(.retry(), auth)
/// ```
///
/// Keep one instance per credential set: the refresh is shared through it.
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
