@_spi(BackendSupport) import Depot
import Dispatch
import Foundation
import JSONServerEngine

/// Transfers on ``InMemoryBackend``: a request with a ``Depot/BackendRequest/bodyFile``, a
/// ``Depot/BackendRequest/destination`` or a ``Depot/BackendRequest/progress`` handler.
///
/// The request is answered as any other (the body file read into the body it stands
/// for, and logged so), with the progress a network would show: the body's bytes go out
/// in slices, then the answer's come in, in slices written to the destination through the
/// same ``DownloadFile`` as ``Depot/URLSessionBackend``'s, so the partial file, the move into
/// place and an error leaving no file behave alike. With a ``InMemoryBackend/latency``,
/// the answer's slices are spread over a further `latency` after it arrives, so a bar
/// visibly moves; cancelling meanwhile ends the request at once with
/// ``Depot/ServiceError/cancelled`` and removes the partial file.
struct InMemoryTransfer: Sendable {
    /// The most slices one body is reported in.
    static let maximumSlices = 64
    /// The smallest slice, so a small body is one report.
    static let minimumSlice = 64 << 10

    let backend: InMemoryBackend

    func send(_ request: BackendRequest) -> Future<BackendResponse, ServiceError> {
        Future { completion in
            let plain: BackendRequest
            let download: DownloadFile?
            switch Result(catching: { () throws(ServiceError) in try Self.prepare(request) }) {
            case .success(let prepared): (plain, download) = prepared
            case .failure(let error):
                completion(.failure(error))
                return NotCancellable()
            }
            if let body = plain.body, let progress = request.progress {
                Self.report(.upload, of: Int64(body.count), to: progress)
            }
            let token = CancellationToken()
            let inner = backend.send(plain).start { result in
                deliver(result, for: request, to: download, token: token, completion: completion)
            }
            token.onCancel { inner.cancel() }
            return token
        }
    }

    /// The request the in-memory server answers (its body file read into its body, with
    /// the `Content-Type` the network would have sent), and the download's file.
    private static func prepare(_ request: BackendRequest) throws(ServiceError) -> (
        BackendRequest, DownloadFile?
    ) {
        try request.validate()
        var plain = request
        plain.bodyFile = nil
        plain.destination = nil
        plain.progress = nil
        if let file = request.bodyFile {
            do {
                plain.body = try Data(contentsOf: file)
            } catch {
                throw .invalidRequest(
                    "the body file \(file.path) cannot be read: \(error.localizedDescription)")
            }
            if !plain.headers.contains("Content-Type") {
                plain.headers["Content-Type"] = request.defaultContentType
            }
        }
        return (
            plain,
            try request.destination.map { destination throws(ServiceError) in try DownloadFile(destination) }
        )
    }

    /// Hands the answer on: a 2xx body written to the download in slices (spread over the
    /// latency, if any) with its progress, and any failure leaving the partial file as
    /// ``DownloadFile`` decides.
    private func deliver(
        _ result: Result<BackendResponse, ServiceError>, for request: BackendRequest,
        to download: DownloadFile?,
        token: CancellationToken, completion: Future<BackendResponse, ServiceError>.Promise
    ) {
        // Only a 2xx has a body to write: a `304` leaves the file as it was.
        guard case .success(let response) = result, (200..<300).contains(response.status) else {
            if let download { download.abandon(after: result.failure) }
            completion(result)
            return
        }
        let body = response.body
        let start: TransferProgress
        do throws(ServiceError) {
            start =
                try download?.begin(
                    status: response.status, headers: response.headers, declaredLength: Int64(body.count))
                ?? TransferProgress(direction: .download, completedBytes: 0, totalBytes: Int64(body.count))
        } catch {
            completion(.failure(error))
            return
        }
        request.progress?.report(start)
        let slices = Self.slices(of: body.count)
        let latency = backend.latency
        let pause = latency > 0 && !slices.isEmpty ? latency / Double(slices.count) : 0
        // One outcome: the transfer's end, or a cancellation, which ends it at once (not when
        // the next slice is due).
        let latch = CompletionLatch()
        token.onCancel {
            guard latch.claim() else { return }
            download?.abandon(after: .cancelled)
            completion(.failure(.cancelled))
        }

        @Sendable func step(_ index: Int) {
            guard !token.isCancelled else { return }
            guard index < slices.count else {
                guard latch.claim() else { return }
                guard let download else {
                    completion(.success(response))
                    return
                }
                var written = response
                do {
                    written.file = try download.finish()
                } catch {
                    completion(.failure(error))
                    return
                }
                written.body = Data()
                completion(.success(written))
                return
            }
            let slice = slices[index]
            do throws(ServiceError) {
                _ = try download?.write(
                    body[(body.startIndex + slice.lowerBound)..<(body.startIndex + slice.upperBound)])
            } catch {
                guard latch.claim() else { return }
                download?.abandon(after: error, discarding: true)
                completion(.failure(error))
                return
            }
            guard !token.isCancelled else { return }
            request.progress?.report(
                TransferProgress(
                    direction: .download, completedBytes: Int64(slice.upperBound),
                    totalBytes: Int64(body.count)))
            if pause > 0 {
                DispatchQueue.global().asyncAfter(deadline: .now() + pause) { step(index + 1) }
            } else {
                step(index + 1)
            }
        }
        step(0)
    }

    /// Reports a body of `count` bytes going `direction` in its slices, at once.
    private static func report(
        _ direction: TransferProgress.Direction, of count: Int64, to progress: ProgressHandler
    ) {
        progress.report(TransferProgress(direction: direction, completedBytes: 0, totalBytes: count))
        for slice in slices(of: Int(count)) {
            progress.report(
                TransferProgress(
                    direction: direction, completedBytes: Int64(slice.upperBound), totalBytes: count))
        }
    }

    /// The index ranges a body of `count` bytes is reported in: slices of at least
    /// ``minimumSlice`` bytes, at most ``maximumSlices`` of them.
    static func slices(of count: Int) -> [Range<Int>] {
        guard count > 0 else { return [] }
        let size = max(minimumSlice, (count + maximumSlices - 1) / maximumSlices)
        return stride(from: 0, to: count, by: size).map { $0..<min(count, $0 + size) }
    }
}

extension Result {
    /// The error of a failure, `nil` for a success.
    fileprivate var failure: Failure? {
        if case .failure(let error) = self { return error }
        return nil
    }
}
