#include "spgemmd_child.hpp"

#include <filesystem>
#include <optional>
#include <thread>

#include <grpcpp/generic/generic_stub.h>

#include "wire/chunk_codec.hpp"

namespace spgemm::attack {

namespace v1 = spgemm::v1;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {

// --backend=cpu, then `flags`.
std::vector<std::string> with_cpu_backend(const std::vector<std::string>& flags) {
  std::vector<std::string> all = {"--backend=cpu"};
  all.insert(all.end(), flags.begin(), flags.end());
  return all;
}

}  // namespace

spgemmd_child::spgemmd_child(const std::vector<std::string>& flags, std::size_t address_space_bytes)
    : spgemmd_server(with_cpu_backend(flags), {/*metrics=*/true, address_space_bytes}) {}

pid_t spawn_self(const std::vector<std::string>& args) {
  std::vector<std::string> all = {fs::read_symlink("/proc/self/exe").string(), "--child"};
  all.insert(all.end(), args.begin(), args.end());
  return spgemmd::testing::spawn(all);
}

grpc::Status raw_call(const std::shared_ptr<grpc::Channel>& channel, const std::string& method, const std::vector<std::string>& messages,
                      std::vector<std::string>* replies, std::chrono::milliseconds deadline) {
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + deadline);
  auto call = stub.PrepareCall(&ctx, method, &cq);
  void* tag = nullptr;
  bool ok = false;
  auto step = [&] { return cq.Next(&tag, &ok) && ok; };
  call->StartCall(reinterpret_cast<void*>(1));
  bool open = step();
  for (const std::string& m : messages) {
    if (!open) break;
    grpc::Slice slice(m);
    grpc::ByteBuffer buffer(&slice, 1);
    call->Write(buffer, reinterpret_cast<void*>(2));
    open = step();
  }
  if (open) {
    call->WritesDone(reinterpret_cast<void*>(3));
    step();
  }
  for (;;) {
    grpc::ByteBuffer reply;
    call->Read(&reply, reinterpret_cast<void*>(4));
    if (!step()) break;
    if (replies != nullptr) {
      std::vector<grpc::Slice> slices;
      (void)reply.Dump(&slices);
      std::string bytes;
      for (const auto& s : slices) bytes.append(reinterpret_cast<const char*>(s.begin()), s.size());
      replies->push_back(std::move(bytes));
    }
  }
  grpc::Status status;
  call->Finish(&status, reinterpret_cast<void*>(5));
  step();
  cq.Shutdown();
  while (cq.Next(&tag, &ok)) {
  }
  return status;
}

std::string bytes_of(const google::protobuf::Message& m) { return m.SerializeAsString(); }

// ---- the wire ----------------------------------------------------------------

namespace {

spgemm::wire::csr_view view_of(const csr& m) {
  return {m.rows, m.cols, m.nnz(), m.row_offsets.data(), m.col_indices.data(), m.values.data(), v1::FLOAT64};
}

}  // namespace

v1::MatrixHeader header_of(const csr& m, const std::string& name) { return spgemm::wire::header_of(view_of(m), name); }

std::vector<v1::UploadPart> chunks_of(const csr& m, std::size_t chunk_bytes) {
  std::vector<v1::UploadPart> parts;
  for (auto [b, e] : spgemm::wire::plan_row_blocks(view_of(m), chunk_bytes)) {
    parts.emplace_back();
    spgemm::wire::fill_chunk(view_of(m), b, e, parts.back().mutable_chunk());
  }
  return parts;
}

namespace {

// Every call of these helpers ends: a server that hangs fails the test instead.
void bound(grpc::ClientContext& ctx) { ctx.set_deadline(std::chrono::system_clock::now() + 60s); }

}  // namespace

grpc::Status upload_parts(v1::Spgemm::Stub& stub, const std::vector<v1::UploadPart>& parts) {
  grpc::ClientContext ctx;
  bound(ctx);
  v1::MatrixInfo info;
  auto writer = stub.Upload(&ctx, &info);
  for (const auto& p : parts) {
    if (!writer->Write(p)) break;
  }
  writer->WritesDone();
  return writer->Finish();
}

std::string upload(v1::Spgemm::Stub& stub, const csr& m, grpc::Status* status, const std::string& name) {
  grpc::ClientContext ctx;
  bound(ctx);
  v1::MatrixInfo info;
  auto writer = stub.Upload(&ctx, &info);
  v1::UploadPart part;
  *part.mutable_header() = header_of(m, name);
  writer->Write(part);
  for (const auto& chunk : chunks_of(m, 1 << 20)) {
    if (!writer->Write(chunk)) break;
  }
  writer->WritesDone();
  const grpc::Status s = writer->Finish();
  if (status != nullptr) *status = s;
  return s.ok() ? info.handle() : "";
}

result read_result(grpc::ClientReaderInterface<v1::ResultPart>& reader) {
  result r;
  std::optional<spgemm::wire::chunk_assembler> a;
  v1::ResultPart part;
  bool well_formed = true;
  while (reader.Read(&part)) {
    if (part.has_header()) {
      well_formed &= !a.has_value();
      a.emplace(part.header());
    } else if (part.has_chunk()) {
      well_formed &= a.has_value() && a->add(part.chunk()).ok();
    } else if (part.has_kept()) {
      r.kept = part.kept();
    }
  }
  r.status = reader.Finish();
  if (r.status.ok() && (!well_formed || (a && !a->finish().ok()))) {
    r.status = grpc::Status(grpc::StatusCode::DATA_LOSS, "the result stream was not well formed");
  }
  if (a && r.status.ok()) {
    r.matrix.rows = a->header().rows();
    r.matrix.cols = a->header().cols();
    r.matrix.row_offsets = std::move(a->row_offsets());
    r.matrix.col_indices = std::move(a->col_indices());
    r.matrix.values = std::move(a->values_f64());
  }
  return r;
}

result multiply(v1::Spgemm::Stub& stub, const std::string& a, const std::string& b, bool keep,
                std::chrono::milliseconds deadline) {
  grpc::ClientContext ctx;
  bound(ctx);
  if (deadline.count() > 0) ctx.set_deadline(std::chrono::system_clock::now() + deadline);
  v1::MultiplyRequest req;
  req.set_a(a);
  req.set_b(b);
  req.mutable_output()->set_keep(keep);
  auto reader = stub.Multiply(&ctx, req);
  return read_result(*reader);
}

result download(v1::Spgemm::Stub& stub, const std::string& handle) {
  grpc::ClientContext ctx;
  bound(ctx);
  v1::DownloadRequest req;
  req.set_handle(handle);
  auto reader = stub.Download(&ctx, req);
  return read_result(*reader);
}

v1::ServerStatus server_status(v1::Spgemm::Stub& stub) {
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + 10s);
  v1::ServerStatus s;
  (void)stub.Status(&ctx, v1::StatusRequest(), &s);
  return s;
}

bool settles(v1::Spgemm::Stub& stub) {
  for (int i = 0; i < 200; ++i) {
    const v1::ServerStatus s = server_status(stub);
    if (s.devices_size() > 0 && s.devices(0).reserved_bytes() == 0 && s.jobs_running() == 0 &&
        s.queue_depth() == 0) {
      return true;
    }
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

}  // namespace spgemm::attack
