import Depot
import Foundation
import JSONServerEngine

/// A record as reads through the middleware show it from the store, without asking the
/// network: what a queued write is made on (its ``WriteBase``) and what an optimistic answer
/// to a queued edit says.
extension OfflineMiddleware {
    /// How many stored listings of a collection are searched for a record no stored answer of
    /// its own holds.
    static let listingsSearched = 8

    /// The record at `request`'s path as the user last saw it: its stored answer (with the
    /// members it shares with the newest stored listing that holds it, when that listing was
    /// stored later), or else the record in that listing, with the writes the server accepted
    /// since and the queued writes laid over; a record created offline from its create. `nil` when the writes leave no record. The base is the
    /// record when it came from a stored answer (a record created offline has none: no other
    /// device can have changed it before its create reaches the server).
    func shownRecord(for request: BackendRequest) -> (record: [String: JSONValue], base: WriteBase?)? {
        let resource = request.resource
        guard resource.id != nil, resource.action.isEmpty, !resource.isSingular else { return nil }
        let account = policy.account()
        let key = StoredResponseKey(method: .get, path: request.path, query: [], account: account)
        var found: (record: [String: JSONValue], response: BackendResponse?, storedAt: Date)?
        if let stored = try? responses.response(for: key), stored.response.status == 200,
            case .object(let record)? = JSONServerRules.parse(stored.response.body)
        {
            found = (record, stored.response, stored.storedAt)
        }
        // A listing read since shows the record as the user saw it last. Over the record's own
        // answer only the members both hold are read from it: a listing may hold more (an
        // `_embed`) or fewer (a summary) members than the record, which are no change.
        if let id = resource.id,
            let listed = Self.record(id, inListingsOf: resource.collectionPath, account: account, responses),
            listed.storedAt > found?.storedAt ?? .distantPast
        {
            if let own = found {
                var record = own.record
                for (name, value) in listed.record where record[name] != nil { record[name] = value }
                // The record's validators hold only while the listing shows it unchanged.
                found = (record, record == own.record ? own.response : nil, listed.storedAt)
            } else {
                found = (listed.record, nil, listed.storedAt)
            }
        }
        let (pending, _, sent) = store.outbox.overlay()
        let path = resource.path
        var writes = pending.writes(toRecord: path)
        guard let found else {
            // Nothing stored: what the writes make of no record (a record created offline).
            guard !writes.isEmpty else { return nil }
            var record: [String: JSONValue]?
            for write in writes { record = write.applied(to: record) }
            return record.map { ($0, nil) }
        }
        writes = sent.sent(after: found.storedAt).writes(toRecord: path) + writes
        var record: [String: JSONValue]? = found.record
        for write in writes { record = write.applied(to: record) }
        guard let record else { return nil }
        return (record, WriteBase(record: record, stored: found.response, laidOver: !writes.isEmpty))
    }

    /// The record with id `id` (as json-server compares ids) in the newest stored listing of
    /// `collection` that holds it, and when that listing was stored.
    private static func record(
        _ id: String, inListingsOf collection: String, account: String, _ responses: OfflineResponseStorage
    ) -> (record: [String: JSONValue], storedAt: Date)? {
        guard
            let listings = try? responses.storedListings(
                of: collection, account: account, limit: listingsSearched)
        else { return nil }
        for listing in listings where listing.response.status == 200 {
            let body =
                listing.response.body.startIndex == 0 ? listing.response.body : Data(listing.response.body)
            guard let elements = JSONServerRules.elementsWithIDs(ofArray: body),
                let element = elements.first(where: { $0.id == id }),
                case .object(let record)? = JSONServerRules.parse(body[element.element])
            else { continue }
            return (record, listing.storedAt)
        }
        return nil
    }
}
