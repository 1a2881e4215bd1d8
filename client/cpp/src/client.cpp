// spgemm::client::Client: the RPCs of spgemm.v1.Spgemm over one channel.
#include "spgemm/client/client.hpp"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <future>
#include <mutex>
#include <sstream>
#include <utility>

#include "call_context.hpp"
#include "kept_call.hpp"
#include "local_transfers.hpp"
#include "spgemm/v1/spgemm.grpc.pb.h"
#include "wire/address.hpp"
#include "wire/chunk_codec.hpp"
#include "wire/chunk_frame.hpp"

namespace spgemm::client {

namespace v1 = spgemm::v1;

// ---------------------------------------------------------------- Error

const char* status_code_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK: return "OK";
    case grpc::StatusCode::CANCELLED: return "CANCELLED";
    case grpc::StatusCode::UNKNOWN: return "UNKNOWN";
    case grpc::StatusCode::INVALID_ARGUMENT: return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED: return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND: return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS: return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED: return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED: return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION: return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED: return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE: return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED: return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL: return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE: return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS: return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED: return "UNAUTHENTICATED";
    default: return "UNKNOWN";
  }
}

Error::Error(grpc::StatusCode code, std::string message)
    : std::runtime_error(std::string(status_code_name(code)) + ": " + message),
      code_(code),
      message_(std::move(message)) {}

// ---------------------------------------------------------------- channel

namespace detail {

// The streaming methods, called with raw byte buffers so that chunks are
// encoded and decoded by hand (wire/chunk_frame.hpp); what the generated stub
// does for its methods, with grpc::ByteBuffer in place of the messages.
struct raw_methods {
  using method = grpc::internal::RpcMethod;
  explicit raw_methods(const std::shared_ptr<grpc::Channel>& c)
      : upload("/spgemm.v1.Spgemm/Upload", method::CLIENT_STREAMING, c),
        multiply("/spgemm.v1.Spgemm/Multiply", method::SERVER_STREAMING, c),
        galerkin("/spgemm.v1.Spgemm/Galerkin", method::SERVER_STREAMING, c),
        transpose("/spgemm.v1.Spgemm/Transpose", method::SERVER_STREAMING, c),
        download("/spgemm.v1.Spgemm/Download", method::SERVER_STREAMING, c) {}
  method upload, multiply, galerkin, transpose, download;
};

struct channel {
  connection_options options;
  std::shared_ptr<grpc::Channel> grpc_channel;
  std::unique_ptr<v1::Spgemm::Stub> stub;
  std::unique_ptr<raw_methods> raw;

  // A context with the call's deadline (unless not `deadline`) and credentials metadata.
  std::unique_ptr<grpc::ClientContext> context(bool deadline = true) const {
    auto ctx = std::make_unique<grpc::ClientContext>();
    if (deadline && options.deadline.count() > 0) {
      ctx->set_deadline(std::chrono::system_clock::now() + options.deadline);
    }
    if (!options.token.empty()) ctx->AddMetadata("authorization", "Bearer " + options.token);
    if (!options.compression.empty()) ctx->AddMetadata("spgemm-compression", options.compression);  // the replies
    return ctx;
  }

  // The shared-memory transfers, set up on first use where the server shares
  // this host; nullptr: the wire (or FAILED_PRECONDITION where the options
  // insist on shared memory).
  local_transfers* local() {
    std::lock_guard<std::mutex> lock(local_mu);
    if (!local_decided) {
      local_decided = true;
      if (options.transfer != transfer_mode::wire) {
        local_state = local_transfers::open(
            grpc_channel, [this](bool deadline) { return context(deadline); }, options.cancel, &no_local);
      }
    }
    if (!local_state && options.transfer == transfer_mode::shared_memory) {
      throw Error(grpc::StatusCode::FAILED_PRECONDITION, "transfer_mode::shared_memory, but " + no_local);
    }
    return local_state.get();
  }

  std::mutex local_mu;
  bool local_decided = false;
  std::unique_ptr<local_transfers> local_state;
  std::string no_local;
};

call_context::call_context(const channel& c) : call_context(c.context(), c.options.cancel) {}

}  // namespace detail

// ---------------------------------------------------------------- cancellation

void cancellation::cancel() {
  std::lock_guard<std::mutex> lock(mu_);
  cancelled_ = true;
  for (grpc::ClientContext* call : calls_) call->TryCancel();
}

bool cancellation::cancelled() const {
  std::lock_guard<std::mutex> lock(mu_);
  return cancelled_;
}

void cancellation::add(grpc::ClientContext* call) {
  std::lock_guard<std::mutex> lock(mu_);
  if (cancelled_) throw Error(grpc::StatusCode::CANCELLED, "cancelled");
  calls_.push_back(call);
}

void cancellation::remove(grpc::ClientContext* call) {
  std::lock_guard<std::mutex> lock(mu_);
  calls_.erase(std::remove(calls_.begin(), calls_.end(), call), calls_.end());
}

namespace {

void check(const grpc::Status& s) {
  if (!s.ok()) throw Error(s);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(grpc::StatusCode::NOT_FOUND, "cannot open '" + path + "'");
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string base_name(const std::string& path) {
  auto pos = path.find_last_of('/');
  return pos == std::string::npos ? path : path.substr(pos + 1);
}

// Reads one ResultPart stream: assembles a streamed matrix chunk by chunk as it
// arrives, or takes the kept result's info; the stats come last.
struct stream_outcome {
  bool have_matrix = false;
  local_result local;
  bool have_kept = false;
  v1::MatrixInfo kept;
  v1::JobStats stats;
};

stream_outcome consume(grpc::ClientContext& ctx, grpc::ClientReader<grpc::ByteBuffer>& reader,
                       const progress_callback& on_progress, const detail::local_transfers* local = nullptr) {
  stream_outcome out;
  std::unique_ptr<spgemm::wire::chunk_assembler> assembler;
  progress p;
  grpc::ByteBuffer message;
  std::vector<grpc::Slice> slices;
  spgemm::wire::chunk_pieces pieces;
  v1::ResultPart part;
  grpc::Status local_error;
  auto add_chunk = [&](const auto& chunk, std::size_t bytes) {
    if (!assembler) {
      local_error = grpc::Status(grpc::StatusCode::INTERNAL, "server sent a chunk before the header");
      return;
    }
    p.bytes += static_cast<std::int64_t>(bytes);
    local_error = assembler->add(chunk);
    if (local_error.ok()) {
      p.rows = assembler->rows_received();
      if (on_progress) on_progress(p);
    }
  };
  while (reader.Read(&message)) {
    const std::size_t bytes = message.Length();
    if (spgemm::wire::decode_chunk(message, &slices, &pieces)) {
      add_chunk(pieces, bytes);
    } else if (!grpc::SerializationTraits<v1::ResultPart>::Deserialize(&message, &part).ok()) {
      local_error = grpc::Status(grpc::StatusCode::INTERNAL, "server sent a message that does not parse");
    } else {
      switch (part.part_case()) {
        case v1::ResultPart::kHeader: {
          local_error = spgemm::wire::chunk_assembler::check_header(part.header(), /*result=*/true);
          if (local_error.ok() && assembler) {
            local_error = grpc::Status(grpc::StatusCode::INTERNAL, "server sent a second header");
          }
          if (local_error.ok()) {
            assembler = std::make_unique<spgemm::wire::chunk_assembler>(part.header());
            p.total_rows = part.header().rows();
          }
          break;
        }
        case v1::ResultPart::kChunk:
          add_chunk(part.chunk(), bytes);
          break;
        case v1::ResultPart::kKept:
          out.have_kept = true;
          out.kept = std::move(*part.mutable_kept());
          break;
        case v1::ResultPart::kStats:
          out.stats = std::move(*part.mutable_stats());
          break;
        case v1::ResultPart::kInRegion:
          if (!local || out.have_matrix) {
            local_error = grpc::Status(grpc::StatusCode::INTERNAL, "server wrote a result into a region unasked");
          } else {
            out.local = local->read(part.in_region());
            out.have_matrix = true;
            p.rows = p.total_rows = out.local.matrix.rows;
            p.bytes = static_cast<std::int64_t>(bytes);
            p.done = true;
            if (on_progress) on_progress(p);
          }
          break;
        default:
          break;
      }
    }
    slices.clear();
    if (!local_error.ok()) {
      ctx.TryCancel();
      break;
    }
  }
  grpc::Status s = reader.Finish();
  if (!local_error.ok()) {
    throw Error(local_error.error_code(), "bad result stream: " + local_error.error_message());
  }
  check(s);
  if (assembler) {
    grpc::Status f = assembler->finish();
    if (!f.ok()) throw Error(f.error_code(), "incomplete result stream: " + f.error_message());
    const auto& h = assembler->header();
    auto& m = out.local.matrix;
    m.rows = h.rows();
    m.cols = h.cols();
    m.row_offsets = std::move(assembler->row_offsets());
    m.col_indices = std::move(assembler->col_indices());
    out.local.value_type = h.value_type();
    if (h.value_type() == v1::FLOAT32) {
      const auto& raw = assembler->values_f32();
      m.values.assign(raw.begin(), raw.end());
    } else {
      m.values = std::move(assembler->values_f64());
    }
    out.have_matrix = true;
    p.done = true;
    if (on_progress) on_progress(p);
  }
  return out;
}

local_result take_local(stream_outcome&& o) {
  if (!o.have_matrix) throw Error(grpc::StatusCode::INTERNAL, "server sent no matrix in a streamed result");
  o.local.stats = std::move(o.stats);
  return std::move(o.local);
}

v1::MultiplyOptions to_proto(const product_options& o) {
  v1::MultiplyOptions m;
  m.set_algorithm(o.algorithm);
  m.set_output_type(o.output_type);
  m.set_priority(o.priority);
  return m;
}

v1::ProductOutput output_of(const product_options& o, bool keep) {
  v1::ProductOutput out;
  out.set_keep(keep);
  out.set_name(o.name);
  out.set_chunk_bytes(o.chunk_bytes);
  return out;
}

// The owner of an upload's chunk slices that reference the caller's arrays
// (wire::encode_chunk): gRPC holds a reference while it may still read them.
// Destroying it waits until the last reference is gone, so upload() never
// returns while gRPC could read arrays the caller may free. Normally they are
// all gone once the call has finished.
class borrowed_arrays {
 public:
  borrowed_arrays()
      : released_(promise_.get_future()),
        owner_(&promise_, [](std::promise<void>* p) { p->set_value(); }) {}
  borrowed_arrays(const borrowed_arrays&) = delete;
  borrowed_arrays& operator=(const borrowed_arrays&) = delete;
  ~borrowed_arrays() {
    owner_.reset();
    released_.wait();
  }
  const std::shared_ptr<const void>& owner() const { return owner_; }

 private:
  std::promise<void> promise_;
  std::future<void> released_;
  std::shared_ptr<const void> owner_;
};

}  // namespace

// ---------------------------------------------------------------- matrix_ref

matrix_ref matrix_ref::of(const csr_matrix& m) {
  return of(m.rows, m.cols, m.row_offsets.data(), m.col_indices.data(), m.values.data());
}

matrix_ref matrix_ref::of(std::int64_t rows, std::int64_t cols, const std::int64_t* row_offsets,
                          const std::int32_t* col_indices, const double* values) {
  return {rows, cols, row_offsets[rows] - row_offsets[0], row_offsets, col_indices, values, v1::FLOAT64};
}

matrix_ref matrix_ref::of(std::int64_t rows, std::int64_t cols, const std::int64_t* row_offsets,
                          const std::int32_t* col_indices, const float* values) {
  return {rows, cols, row_offsets[rows] - row_offsets[0], row_offsets, col_indices, values, v1::FLOAT32};
}

// ---------------------------------------------------------------- RemoteMatrix

RemoteMatrix::RemoteMatrix(std::shared_ptr<detail::channel> channel, v1::MatrixInfo info)
    : channel_(std::move(channel)), info_(std::move(info)) {}

RemoteMatrix::RemoteMatrix(RemoteMatrix&& other) noexcept
    : channel_(std::move(other.channel_)), info_(std::move(other.info_)) {
  other.info_.Clear();
}

RemoteMatrix& RemoteMatrix::operator=(RemoteMatrix&& other) noexcept {
  if (this != &other) {
    drop();
    channel_ = std::move(other.channel_);
    info_ = std::move(other.info_);
    other.info_.Clear();
  }
  return *this;
}

RemoteMatrix::~RemoteMatrix() { drop(); }

void RemoteMatrix::drop() noexcept {
  if (!channel_ || info_.handle().empty()) return;
  try {
    auto ctx = channel_->context();
    if (channel_->options.deadline.count() <= 0) {
      ctx->set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    }
    v1::DeleteRequest req;
    req.set_handle(info_.handle());
    v1::DeleteResponse resp;
    (void)channel_->stub->Delete(ctx.get(), req, &resp);
  } catch (...) {
  }
  channel_.reset();
  info_.Clear();
}

std::string RemoteMatrix::release() {
  std::string h = info_.handle();
  info_.Clear();
  channel_.reset();
  return h;
}

std::int64_t RemoteMatrix::remove() {
  if (!channel_ || info_.handle().empty()) return 0;
  auto ctx = channel_->context();
  v1::DeleteRequest req;
  req.set_handle(info_.handle());
  v1::DeleteResponse resp;
  check(channel_->stub->Delete(ctx.get(), req, &resp));
  release();
  return resp.freed_bytes();
}

// ---------------------------------------------------------------- Client

Client::Client(connection_options options) : channel_(std::make_shared<detail::channel>()) {
  std::shared_ptr<grpc::ChannelCredentials> creds;
  if (options.tls) {
    grpc::SslCredentialsOptions ssl;
    if (!options.root_cert_file.empty()) ssl.pem_root_certs = read_file(options.root_cert_file);
    if (options.client_cert_file.empty() != options.client_key_file.empty()) {
      throw Error(grpc::StatusCode::INVALID_ARGUMENT, "a client certificate and its key go together: give both");
    }
    if (!options.client_cert_file.empty()) {
      ssl.pem_cert_chain = read_file(options.client_cert_file);
      ssl.pem_private_key = read_file(options.client_key_file);
    }
    creds = grpc::SslCredentials(ssl);
  } else {
    creds = grpc::InsecureChannelCredentials();
  }
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  if (options.compression == "gzip" || options.compression == "deflate") {  // the requests
    args.SetCompressionAlgorithm(options.compression == "gzip" ? GRPC_COMPRESS_GZIP : GRPC_COMPRESS_DEFLATE);
  } else if (!options.compression.empty()) {
    throw Error(grpc::StatusCode::INVALID_ARGUMENT,
                "compression must be empty, \"gzip\" or \"deflate\", not \"" + options.compression + "\"");
  }
  if (!options.load_balancing_policy.empty()) args.SetLoadBalancingPolicyName(options.load_balancing_policy);
  if (options.tls && !options.tls_target_name.empty()) args.SetSslTargetNameOverride(options.tls_target_name);
  options.address = spgemm::wire::with_default_port(options.address);
  channel_->grpc_channel = grpc::CreateCustomChannel(options.address, creds, args);
  channel_->stub = v1::Spgemm::NewStub(channel_->grpc_channel);
  channel_->raw = std::make_unique<detail::raw_methods>(channel_->grpc_channel);
  channel_->options = std::move(options);
}

Client::~Client() = default;
Client::Client(Client&&) noexcept = default;
Client& Client::operator=(Client&&) noexcept = default;

const connection_options& Client::options() const { return channel_->options; }

bool Client::wait_connected(std::chrono::milliseconds timeout) {
  return channel_->grpc_channel->WaitForConnected(std::chrono::system_clock::now() + timeout);
}

bool Client::connected() const {
  return channel_->grpc_channel->GetState(false) == GRPC_CHANNEL_READY;
}

std::string Client::transfer() { return channel_->local() ? "shared_memory" : "wire"; }

RemoteMatrix Client::upload(const matrix_ref& m, const upload_options& options) {
  if (detail::local_transfers* local = channel_->local()) {
    RemoteMatrix stored(channel_, local->upload(m, options));
    if (options.on_progress) options.on_progress({stored.info().bytes(), m.rows, m.rows, true});
    return stored;
  }
  spgemm::wire::csr_view view{m.rows, m.cols, m.nnz, m.row_offsets, m.col_indices, m.values, m.value_type};
  // Declared first, so destroyed last: waits until gRPC let go of the
  // caller's arrays, after the call is gone.
  borrowed_arrays arrays;
  detail::call_context ctx(*channel_);
  v1::MatrixInfo info;
  std::unique_ptr<grpc::ClientWriter<grpc::ByteBuffer>> writer(
      grpc::internal::ClientWriterFactory<grpc::ByteBuffer>::Create(channel_->grpc_channel.get(),
                                                                     channel_->raw->upload, ctx.get(), &info));
  v1::UploadPart part;
  *part.mutable_header() = spgemm::wire::header_of(view, options.name);
  part.mutable_header()->set_ttl_seconds(options.ttl_seconds);
  grpc::ByteBuffer message;
  bool own = false;
  grpc::SerializationTraits<v1::UploadPart>::Serialize(part, &message, &own);
  bool ok = writer->Write(message);
  progress p;
  p.total_rows = m.rows;
  if (ok) {
    const std::size_t chunk_bytes = options.chunk_bytes ? options.chunk_bytes : spgemm::wire::default_chunk_bytes;
    for (const auto& [begin, end] : spgemm::wire::plan_row_blocks(view, chunk_bytes)) {
      // Columns and values go from the caller's arrays to the socket.
      message = spgemm::wire::encode_chunk(view, begin, end, begin, arrays.owner());
      p.bytes += static_cast<std::int64_t>(message.Length());
      if (!writer->Write(message)) {
        ok = false;
        break;
      }
      p.rows = end;
      if (options.on_progress) options.on_progress(p);
    }
  }
  if (ok) writer->WritesDone();
  check(writer->Finish());
  p.done = true;
  if (options.on_progress) options.on_progress(p);
  return RemoteMatrix(channel_, std::move(info));
}

RemoteMatrix Client::upload(const csr_matrix& m, const upload_options& options) {
  return upload(matrix_ref::of(m), options);
}

RemoteMatrix Client::upload_file(const std::string& path, upload_options options) {
  csr_matrix m = read_matrix_market(path);
  if (options.name.empty()) options.name = base_name(path);
  return upload(m, options);
}

namespace {

kept_result take_kept(const std::shared_ptr<detail::channel>& channel, stream_outcome&& o) {
  if (!o.have_kept) throw Error(grpc::StatusCode::INTERNAL, "server sent no handle for a kept result");
  return {RemoteMatrix(channel, std::move(o.kept)), std::move(o.stats)};
}

// Calls the server-streaming `method` with `req` and reads the whole reply stream.
template <typename Request>
stream_outcome call_stream(const detail::channel& channel, const grpc::internal::RpcMethod& method,
                           const Request& req, const progress_callback& on_progress,
                           const detail::local_transfers* local = nullptr) {
  detail::call_context ctx(channel);
  std::unique_ptr<grpc::ClientReader<grpc::ByteBuffer>> reader(grpc::internal::ClientReaderFactory<grpc::ByteBuffer>::Create(
      channel.grpc_channel.get(), method, ctx.get(), req));
  return consume(*ctx, *reader, on_progress, local);
}

// A stored matrix written into the result region (grown to its size) and copied out.
local_result download_local(detail::channel& channel, detail::local_transfers& local, const v1::MatrixInfo& info) {
  const std::int64_t bytes = detail::local_transfers::region_bytes(info.rows(), info.nnz(),
                                                                   info.value_type() == v1::FLOAT32 ? 4 : 8);
  return take_local(local.with_result_region(bytes, [&](const v1::RegionRef& region) {
    v1::DownloadRequest req;
    req.set_handle(info.handle());
    *req.mutable_region() = region;
    return call_stream(channel, channel.raw->download, req, {}, &local);
  }));
}

// A product streamed back, or with shared memory written into the result
// region; one too large for it is kept, downloaded into a grown region and
// deleted. `request(keep)` builds the request.
template <typename Build>
local_result product(const std::shared_ptr<detail::channel>& channel, const grpc::internal::RpcMethod& method,
                     const Build& request, const product_options& options) {
  detail::local_transfers* local = channel->local();
  if (!local) return take_local(call_stream(*channel, method, request(false), options.on_progress));
  stream_outcome o = local->with_result_region(0, [&](const v1::RegionRef& region) {
    auto req = request(false);
    *req.mutable_output()->mutable_region() = region;
    return call_stream(*channel, method, req, options.on_progress, local);
  });
  if (o.have_matrix) return take_local(std::move(o));
  if (!o.have_kept) throw Error(grpc::StatusCode::INTERNAL, "server sent neither a result nor its handle");
  RemoteMatrix kept(channel, o.kept);  // deleted once downloaded
  local_result r = download_local(*channel, *local, kept.info());
  r.stats = std::move(o.stats);
  return r;
}

// The product requests; `keep` stores the result on the server.
v1::MultiplyRequest multiply_request(const std::string& a, const std::string& b, const product_options& options,
                                     bool keep) {
  v1::MultiplyRequest req;
  req.set_a(a);
  req.set_b(b);
  *req.mutable_options() = to_proto(options);
  *req.mutable_output() = output_of(options, keep);
  return req;
}

v1::GalerkinRequest galerkin_request(const std::string& p, const std::string& a, v1::GalerkinForm form,
                                     const product_options& options, bool keep) {
  v1::GalerkinRequest req;
  req.set_p(p);
  req.set_a(a);
  req.set_form(form);
  *req.mutable_options() = to_proto(options);
  *req.mutable_output() = output_of(options, keep);
  return req;
}

v1::TransposeRequest transpose_request(const std::string& a, const product_options& options, bool keep) {
  v1::TransposeRequest req;
  req.set_a(a);
  *req.mutable_output() = output_of(options, keep);
  return req;
}

}  // namespace

namespace detail {

const std::shared_ptr<grpc::Channel>& grpc_channel_of(const channel& c) { return c.grpc_channel; }

kept_result call_kept(const std::shared_ptr<channel>& c, const grpc::internal::RpcMethod& method,
                      const google::protobuf::Message& request, const progress_callback& on_progress) {
  return take_kept(c, call_stream(*c, method, request, on_progress));
}

}  // namespace detail

local_result Client::multiply(const std::string& a, const std::string& b, const product_options& options) {
  return product(channel_, channel_->raw->multiply,
                 [&](bool keep) { return multiply_request(a, b, options, keep); }, options);
}

kept_result Client::multiply_kept(const std::string& a, const std::string& b, const product_options& options) {
  return take_kept(channel_, call_stream(*channel_, channel_->raw->multiply,
                                         multiply_request(a, b, options, true), options.on_progress));
}

local_result Client::galerkin(const std::string& p, const std::string& a, v1::GalerkinForm form,
                              const product_options& options) {
  return product(channel_, channel_->raw->galerkin,
                 [&](bool keep) { return galerkin_request(p, a, form, options, keep); }, options);
}

kept_result Client::galerkin_kept(const std::string& p, const std::string& a, v1::GalerkinForm form,
                                  const product_options& options) {
  return take_kept(channel_, call_stream(*channel_, channel_->raw->galerkin,
                                         galerkin_request(p, a, form, options, true), options.on_progress));
}

local_result Client::transpose(const std::string& a, const product_options& options) {
  return product(channel_, channel_->raw->transpose, [&](bool keep) { return transpose_request(a, options, keep); },
                 options);
}

kept_result Client::transpose_kept(const std::string& a, const product_options& options) {
  return take_kept(channel_, call_stream(*channel_, channel_->raw->transpose,
                                         transpose_request(a, options, true), options.on_progress));
}

local_result Client::download(const std::string& handle, const progress_callback& on_progress,
                              std::int64_t chunk_bytes) {
  if (detail::local_transfers* local = channel_->local()) return download_local(*channel_, *local, describe(handle));
  v1::DownloadRequest req;
  req.set_handle(handle);
  req.set_chunk_bytes(chunk_bytes);
  return take_local(call_stream(*channel_, channel_->raw->download, req, on_progress));
}

std::vector<v1::MatrixInfo> Client::list() {
  std::vector<v1::MatrixInfo> all;
  v1::ListRequest req;
  do {  // a page at a time, until the server says none follows
    detail::call_context ctx(*channel_);
    v1::ListResponse resp;
    check(channel_->stub->List(ctx.get(), req, &resp));
    all.insert(all.end(), resp.matrices().begin(), resp.matrices().end());
    req.set_page_token(resp.next_page_token());
  } while (!req.page_token().empty());
  return all;
}

v1::MatrixInfo Client::describe(const std::string& handle) {
  detail::call_context ctx(*channel_);
  v1::DescribeRequest req;
  req.set_handle(handle);
  v1::MatrixInfo info;
  check(channel_->stub->Describe(ctx.get(), req, &info));
  return info;
}

v1::ServerStatus Client::status() {
  detail::call_context ctx(*channel_);
  v1::ServerStatus st;
  check(channel_->stub->Status(ctx.get(), v1::StatusRequest(), &st));
  return st;
}

std::int64_t Client::remove(const std::string& handle) {
  detail::call_context ctx(*channel_);
  v1::DeleteRequest req;
  req.set_handle(handle);
  v1::DeleteResponse resp;
  check(channel_->stub->Delete(ctx.get(), req, &resp));
  return resp.freed_bytes();
}

}  // namespace spgemm::client
