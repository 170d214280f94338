import Foundation

extension Future {
    /// Transforms the value when the work succeeds; failures pass through.
    @inlinable
    public func map<NewValue: Sendable>(
        _ transform: @escaping @Sendable (Value) -> NewValue
    ) -> Future<NewValue, Failure> {
        Future<NewValue, Failure>(reportsOnce: reportsOnce) { completion in
            run { completion($0.map(transform)) }
        }
    }

    /// Transforms the failure; values pass through.
    @inlinable
    public func mapError<NewFailure: Error>(
        _ transform: @escaping @Sendable (Failure) -> NewFailure
    ) -> Future<Value, NewFailure> {
        Future<Value, NewFailure>(reportsOnce: reportsOnce) { completion in
            run { completion($0.mapError(transform)) }
        }
    }

    /// Transforms the value with code that can fail: a thrown `Failure` ends the future
    /// with that failure; failures from upstream pass through without calling `transform`.
    ///
    /// Use it for a step that needs no waiting, such as decoding a response: it costs
    /// what ``map(_:)`` costs, less than a ``flatMap(_:)`` to a ``Future/init(result:)``.
    ///
    /// ```swift
    /// let user = backend.send(request).tryMap { response throws(ServiceError) in
    ///     try coding.decode(User.self, from: response.body)
    /// }
    /// ```
    @inlinable
    public func tryMap<NewValue: Sendable>(
        _ transform: @escaping @Sendable (Value) throws(Failure) -> NewValue
    ) -> Future<NewValue, Failure> {
        Future<NewValue, Failure>(reportsOnce: reportsOnce) { completion in
            run { result in
                completion(result.flatMap { value in Result { () throws(Failure) in try transform(value) } })
            }
        }
    }

    /// Starts the future `transform` makes from the value, after this one succeeds.
    ///
    /// Cancelling the chain cancels whichever step is running.
    @inlinable
    public func flatMap<NewValue: Sendable>(
        _ transform: @escaping @Sendable (Value) -> Future<NewValue, Failure>
    ) -> Future<NewValue, Failure> {
        // The step keeps only the first outcome of each of its two futures.
        Future<NewValue, Failure>(reportsOnce: true) { completion in
            FlatMapStep(transform: transform, completion: completion.complete).start(self)
        }
    }

    /// Jayme's name for ``flatMap(_:)``, kept so code moving from Jayme reads as it did
    /// (see the article Migrating from Jayme); new code says `flatMap`.
    @inlinable
    public func andThen<NewValue: Sendable>(
        _ transform: @escaping @Sendable (Value) -> Future<NewValue, Failure>
    ) -> Future<NewValue, Failure> {
        flatMap(transform)
    }

    /// Replaces a failure with the outcome of the future `handler` makes from it.
    ///
    /// ```swift
    /// let user = users.findByID(id).recover { error in
    ///     error == .notFound ? .success(.guest) : .failure(error)
    /// }
    /// ```
    @inlinable
    public func recover(
        _ handler: @escaping @Sendable (Failure) -> Future<Value, Failure>
    ) -> Future<Value, Failure> {
        Future { completion in
            let current = SerialCancellable()
            current.setFirst(
                run { result in
                    guard current.advance() else { return }
                    switch result {
                    case .success: completion(result)
                    case .failure(let error): current.set(handler(error).run(completion.complete))
                    }
                }
            )
            return current
        }
    }

    /// Calls `body` with the outcome before passing it on, for side effects such as logging.
    @inlinable
    public func handleResult(
        _ body: @escaping @Sendable (Result<Value, Failure>) -> Void
    ) -> Future<Value, Failure> {
        Future(reportsOnce: reportsOnce) { completion in
            run { result in
                body(result)
                completion(result)
            }
        }
    }

    /// Delivers the outcome on `queue`, e.g. `.main` for UI code.
    ///
    /// Without it the completion runs where the work finished (a URLSession delegate
    /// queue, a backend's queue, or the caller's thread for an immediate value).
    @inlinable
    public func receive(on queue: DispatchQueue) -> Future<Value, Failure> {
        Future(reportsOnce: reportsOnce) { completion in
            run { result in queue.async { completion(result) } }
        }
    }

    /// Runs both futures at once and succeeds with both values, or fails with the
    /// first failure (cancelling the other; when `first` fails at once, `second` is
    /// not started).
    public static func zip<A: Sendable, B: Sendable>(
        _ first: Future<A, Failure>, _ second: Future<B, Failure>
    ) -> Future<(A, B), Failure> where Value == (A, B) {
        // Not marked `reportsOnce`, although `done` lets one outcome through: the guard of
        // `start` also lets go of the caller's completion once it ran, which the parts'
        // cancellables (kept by `group` until it is cancelled) would otherwise keep alive.
        Future { completion in
            let group = CancellationToken()
            let state = Locked<(a: A?, b: B?, done: Bool)>((nil, nil, false))
            @Sendable func finish(_ update: (inout (a: A?, b: B?, done: Bool)) -> Failure?) {
                let outcome = state.withLock { state -> Result<(A, B), Failure>? in
                    guard !state.done else { return nil }
                    if let error = update(&state) {
                        state.done = true
                        return .failure(error)
                    }
                    guard let a = state.a, let b = state.b else { return nil }
                    state.done = true
                    return .success((a, b))
                }
                guard let outcome else { return }
                if case .failure = outcome { group.cancel() }
                completion(outcome)
            }
            // Each part counts with its first outcome only.
            let firstWork = first.run { result in
                finish { state in
                    guard state.a == nil else { return nil }
                    switch result {
                    case .success(let value):
                        state.a = value
                        return nil
                    case .failure(let error): return error
                    }
                }
            }
            group.onCancel { firstWork.cancel() }
            // A first future that failed at once leaves nothing for the second to do.
            guard !group.isCancelled else { return group }
            let secondWork = second.run { result in
                finish { state in
                    guard state.b == nil else { return nil }
                    switch result {
                    case .success(let value):
                        state.b = value
                        return nil
                    case .failure(let error): return error
                    }
                }
            }
            group.onCancel { secondWork.cancel() }
            return group
        }
    }

    /// Runs three futures at once and succeeds with the three values, or fails with
    /// the first failure (cancelling the others; a part that fails at once leaves the
    /// later parts unstarted).
    ///
    /// ```swift
    /// let (user, posts, todos) = try await Future.zip(
    ///     users.findByID(1), posts.findAll(query: ["userId": 1]), todos.findAll(query: ["userId": 1])
    /// ).value
    /// ```
    ///
    /// For any number of futures of one type, use ``all(_:)``.
    public static func zip<A: Sendable, B: Sendable, C: Sendable>(
        _ first: Future<A, Failure>, _ second: Future<B, Failure>, _ third: Future<C, Failure>
    ) -> Future<(A, B, C), Failure> where Value == (A, B, C) {
        Future<((A, B), C), Failure>.zip(Future<(A, B), Failure>.zip(first, second), third)
            .map { ($0.0.0, $0.0.1, $0.1) }
    }

    /// Runs four futures at once and succeeds with the four values, or fails with the
    /// first failure (cancelling the others; a part that fails at once leaves the
    /// later parts unstarted).
    public static func zip<A: Sendable, B: Sendable, C: Sendable, D: Sendable>(
        _ first: Future<A, Failure>, _ second: Future<B, Failure>, _ third: Future<C, Failure>,
        _ fourth: Future<D, Failure>
    ) -> Future<(A, B, C, D), Failure> where Value == (A, B, C, D) {
        Future<((A, B), (C, D)), Failure>.zip(
            Future<(A, B), Failure>.zip(first, second), Future<(C, D), Failure>.zip(third, fourth)
        )
        .map { ($0.0.0, $0.0.1, $0.1.0, $0.1.1) }
    }

    /// Runs every future at once and succeeds with their values in the same order,
    /// or fails with the first failure (cancelling the rest, and starting none of
    /// those after a future that fails at once).
    ///
    /// An empty array succeeds at once with `[]`.
    public static func all<Element: Sendable>(
        _ futures: [Future<Element, Failure>]
    ) -> Future<[Element], Failure> where Value == [Element] {
        // Not marked `reportsOnce`, for the same reason as `zip`.
        Future<[Element], Failure> { completion in
            let group = CancellationToken()
            let state = Locked<(values: [Int: Element], done: Bool)>(([:], futures.isEmpty))
            if futures.isEmpty { completion(.success([])) }
            for (index, future) in futures.enumerated() {
                // After a failure that came at once, start nothing more.
                guard !group.isCancelled else { break }
                let work = future.run { result in
                    let outcome = state.withLock { state -> Result<[Element], Failure>? in
                        // Each future counts with its first outcome only.
                        guard !state.done, state.values[index] == nil else { return nil }
                        switch result {
                        case .success(let value):
                            state.values[index] = value
                            guard state.values.count == futures.count else { return nil }
                            state.done = true
                            // `values[i]` is `Element?`; compactMap removes only that layer.
                            return .success((0..<futures.count).compactMap { state.values[$0] })
                        case .failure(let error):
                            state.done = true
                            return .failure(error)
                        }
                    }
                    guard let outcome else { return }
                    if case .failure = outcome { group.cancel() }
                    completion(outcome)
                }
                group.onCancel { work.cancel() }
            }
            return group
        }
    }
}
