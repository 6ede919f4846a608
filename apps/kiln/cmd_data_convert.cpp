// kiln data convert idx --images FILE [--labels FILE] --out PREFIX [--shards N]
//                       [--compression none|gzip|zlib]
// kiln data convert csv FILE [--delimiter C] --out PREFIX [--shards N] [--compression ...]
// kiln data convert image_folder ROOT [--seed N] --out PREFIX [--shards N] [--compression ...]

#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include <fmt/format.h>

#include "apps/kiln/cli.h"
#include "kiln/core/console.h"
#include "kiln/io/convert_csv.h"
#include "kiln/io/convert_idx.h"
#include "kiln/io/image_folder.h"

namespace kiln::cli {
namespace {

struct OutputArgs {
  std::string prefix, compression = "none";
  int shards = 1;
  void add_to(CLI::App& command) {
    command.add_option("--out", prefix, "Output prefix: PREFIX-00000-of-0000N.tfrecord[.gz]")
        ->required();
    command.add_option("--shards", shards, "Number of output files")
        ->check(CLI::Range(1, 100000))
        ->capture_default_str();
    command.add_option("--compression", compression, "none, gzip or zlib")
        ->check(CLI::IsMember({"none", "gzip", "zlib"}))
        ->capture_default_str();
  }
};

struct IdxArgs {
  std::string images, labels;
  OutputArgs out;
};

struct ImageFolderArgs {
  std::string root;
  uint64_t seed = 1;
  OutputArgs out;
};

struct CsvArgs {
  std::string file;
  char delimiter = ',';
  OutputArgs out;
};

// Runs `convert` into the sharded writer with a progress bar, then prints the summary line.
int convert_with_progress(
    const OutputArgs& args,
    const std::function<void(io::ShardedTfRecordWriter&, const io::ConvertProgress&)>& convert) {
  std::filesystem::path parent = std::filesystem::path(args.prefix).parent_path();
  if (!parent.empty()) std::filesystem::create_directories(parent);
  io::ShardedTfRecordWriter writer(args.prefix, args.shards,
                                   io::parse_compression(args.compression));
  Console console(stdout, ::isatty(::fileno(stdout)) != 0, "", system_seconds);
  double start = system_seconds();
  convert(writer, [&](int64_t done, int64_t total) {
    console.status(count_bar_text(done, total, system_seconds() - start, "records", 30),
                   done == total);
  });
  writer.close();
  console.line(fmt::format(
      "wrote {} records ({:.1f} MB before compression) to {} shard{} in "
      "{:.1f} s: {}{}",
      writer.records(), double(writer.bytes()) / 1e6, args.shards, args.shards == 1 ? "" : "s",
      system_seconds() - start, writer.paths().front(), args.shards > 1 ? " ..." : ""));
  return 0;
}

void add_idx_command(CLI::App& convert, Action& action) {
  auto* idx = convert.add_subcommand("idx", "IDX images (and labels) to tf.Example records");
  auto args = std::make_shared<IdxArgs>();
  idx->add_option("--images", args->images, "IDX image file ([N, H, W] or [N, H, W, C] bytes)")
      ->required()
      ->check(CLI::ExistingFile);
  idx->add_option("--labels", args->labels, "IDX label file ([N] integers)")
      ->check(CLI::ExistingFile);
  args->out.add_to(*idx);
  idx->callback([&action, args] {
    action = [args] {
      return convert_with_progress(args->out, [&](auto& writer, const auto& progress) {
        io::convert_idx(args->images, args->labels, writer, progress);
      });
    };
  });
}

void add_csv_command(CLI::App& convert, Action& action) {
  auto* csv = convert.add_subcommand(
      "csv", "CSV rows to tf.Example records, one feature per column, typed by its values");
  auto args = std::make_shared<CsvArgs>();
  csv->add_option("file", args->file, "CSV file with a header row (gzipped or not)")
      ->required()
      ->check(CLI::ExistingFile);
  csv->add_option("--delimiter", args->delimiter, "Cell delimiter")->capture_default_str();
  args->out.add_to(*csv);
  csv->callback([&action, args] {
    action = [args] {
      io::CsvTable table = io::read_csv(args->file, args->delimiter);
      return convert_with_progress(args->out, [&](auto& writer, const auto& progress) {
        io::convert_csv(table, writer, progress);
      });
    };
  });
}

void add_image_folder_command(CLI::App& convert, Action& action) {
  auto* images = convert.add_subcommand(
      "image_folder", "ROOT/<class>/<image>.png|.jpg to tf.Example records (image/encoded, ...)");
  auto args = std::make_shared<ImageFolderArgs>();
  images->add_option("root", args->root, "Folder with one sub-folder of images per class")
      ->required()
      ->check(CLI::ExistingDirectory);
  images->add_option("--seed", args->seed, "Seed of the record order, which mixes classes")
      ->capture_default_str();
  args->out.add_to(*images);
  images->callback([&action, args] {
    action = [args] {
      io::ImageFolder folder = io::scan_image_folder(args->root);
      return convert_with_progress(args->out, [&](auto& writer, const auto& progress) {
        io::convert_image_folder(folder, args->seed, writer, progress);
      });
    };
  });
}

}  // namespace

void add_data_convert_command(CLI::App& data, Action& action) {
  auto* convert = data.add_subcommand("convert", "Write datasets as TFRecord files of tf.Example");
  convert->require_subcommand(1);
  add_idx_command(*convert, action);
  add_csv_command(*convert, action);
  add_image_folder_command(*convert, action);
}

}  // namespace kiln::cli
