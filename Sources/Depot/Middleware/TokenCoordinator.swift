import Foundation

/// The shared state behind ``BearerAuthMiddleware``: the token last seen, and the one
/// refresh that may be running, with the requests waiting for it.
final class TokenCoordinator: Sendable {
    /// How a refresh ended, for each waiting request to turn into its own outcome.
    typealias RefreshResult = Result<String, RefreshFailure>

    /// Why a refresh gave no token: a ``ServiceError`` the refresh threw (kept), or
    /// anything else (`nil`: each request returns its own 401).
    struct RefreshFailure: Error {
        let error: ServiceError?
    }

    private struct State {
        /// The token last read from the provider or returned by a refresh.
        var current: String?
        /// Completed refreshes; a provider read that overlaps one may be stale.
        var epoch = 0
        var refreshing = false
        var waiters = Registry<@Sendable (RefreshResult) -> Void>()
    }

    private let provider: @Sendable () async throws -> String?
    private let refresher: @Sendable (String?) async throws -> String
    private let state = Locked(State())

    init(
        token: @escaping @Sendable () async throws -> String?,
        refresh: @escaping @Sendable (String?) async throws -> String
    ) {
        self.provider = token
        self.refresher = refresh
    }

    /// The token for a new request: the refreshed one when a refresh is running, the
    /// provider's otherwise (`nil` to send no `Authorization`).
    func token() -> Future<String?, ServiceError> {
        refreshInFlight().flatMap { [self] fresh in
            if let fresh { return .success(fresh) }
            return currentToken()
        }
    }

    /// The outcome of the refresh running now: its token, or `nil` when none is running
    /// or it gave none.
    private func refreshInFlight() -> Future<String?, ServiceError> {
        Future { [self] completion in
            let waiter = state.withLock { state -> Int? in
                guard state.refreshing else { return nil }
                return Self.add({ completion(.success(try? $0.get())) }, to: &state)
            }
            guard let waiter else {
                completion(.success(nil))
                return NotCancellable()
            }
            return WaiterCancellable(coordinator: self, waiter: waiter) { completion(.failure(.cancelled)) }
        }
    }

    /// The provider's token, remembered as the current one unless a refresh completed
    /// while it was being read (then the refreshed token is newer).
    private func currentToken() -> Future<String?, ServiceError> {
        Future { [self] completion in
            let epoch = state.withLock { $0.epoch }
            return readProvider().run { [self] result in
                completion(
                    result.map { token in
                        state.withLock { state in
                            guard state.epoch == epoch else { return state.current ?? token }
                            state.current = token
                            return token
                        }
                    })
            }
        }
    }

    /// The token to replay with after the server rejected `rejected` (`nil`: a request
    /// sent without a token): the one a refresh already produced (or any token known
    /// now, when there was none), the one a running refresh will produce, or the
    /// outcome of a new refresh, which this call starts.
    ///
    /// A refresh is shared: it is not cancelled when the request that started it is.
    func replacement(for rejected: String?) -> Future<String, RefreshFailure> {
        Future { [self] completion in
            enum Step {
                case use(String)
                case wait(Int)
                case refresh(Int)
            }
            let step = state.withLock { state -> Step in
                if state.refreshing { return .wait(Self.add(completion.complete, to: &state)) }
                if let current = state.current, current != rejected { return .use(current) }
                state.refreshing = true
                return .refresh(Self.add(completion.complete, to: &state))
            }
            switch step {
            case .use(let token):
                completion(.success(token))
                return NotCancellable()
            case .wait(let waiter):
                return WaiterCancellable(coordinator: self, waiter: waiter) {
                    completion(.failure(RefreshFailure(error: .cancelled)))
                }
            case .refresh(let waiter):
                startRefresh(rejecting: rejected)
                return WaiterCancellable(coordinator: self, waiter: waiter) {
                    completion(.failure(RefreshFailure(error: .cancelled)))
                }
            }
        }
    }

    /// Runs the refresh in a task of its own and hands its outcome to every waiter.
    private func startRefresh(rejecting rejected: String?) {
        let refresher = refresher
        Task { [self] in
            let result: RefreshResult
            do {
                result = .success(try await refresher(rejected))
            } catch let error as ServiceError {
                result = .failure(RefreshFailure(error: error))
            } catch {
                result = .failure(RefreshFailure(error: nil))
            }
            let waiters = state.withLock { state -> [@Sendable (RefreshResult) -> Void] in
                state.refreshing = false
                if case .success(let token) = result {
                    state.current = token
                    state.epoch += 1
                }
                return state.waiters.removeAll()
            }
            for waiter in waiters { waiter(result) }
        }
    }

    /// Reads the provider in a task, mapping its errors to ``ServiceError``.
    private func readProvider() -> Future<String?, ServiceError> {
        let provider = provider
        return Future { () async throws(ServiceError) -> String? in
            let token: String?
            do {
                token = try await provider()
            } catch let error as ServiceError {
                throw error
            } catch is CancellationError {
                throw .cancelled
            } catch {
                throw .invalidRequest("The bearer token provider failed: \(error.localizedDescription)")
            }
            if Task.isCancelled { throw .cancelled }
            return token
        }
    }

    /// Adds a waiter, resumed by the refresh's task.
    private static func add(
        _ waiter: @escaping @Sendable (RefreshResult) -> Void, to state: inout State
    ) -> Int {
        state.waiters.add(waiter)
    }

    /// Removes a waiter that gave up; `true` when it was still waiting.
    fileprivate func removeWaiter(_ waiter: Int) -> Bool {
        state.withLock { $0.waiters.remove(waiter) != nil }
    }
}

/// Lets a request stop waiting for a refresh; the refresh itself goes on for the others.
private struct WaiterCancellable: Cancellable {
    let coordinator: TokenCoordinator
    let waiter: Int
    let onCancel: @Sendable () -> Void

    func cancel() {
        if coordinator.removeWaiter(waiter) { onCancel() }
    }
}
