import Depot
import Foundation

/// The writes an ``OfflineStore`` keeps until they can be sent.
///
/// Not built yet: writes pass through unchanged.
public final class Outbox: Sendable {
    let database: SQLiteDatabase

    init(database: SQLiteDatabase) {
        self.database = database
    }

    /// Every entry waiting or kept, in the order they will be replayed.
    ///
    /// Not built yet: always empty.
    public func entries() throws(OfflineStoreError) -> [QueuedWrite] {
        []
    }

    /// Sends `request` (a write) through `next`.
    func send(
        _ request: BackendRequest,
        through next: @escaping @Sendable (BackendRequest) -> Future<BackendResponse, ServiceError>
    ) -> Future<BackendResponse, ServiceError> {
        next(request)
    }
}
