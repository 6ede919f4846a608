// kiln list [KIND]: every registered component with its options, types, defaults and docs.

#include <cstdio>

#include "apps/kiln/cli.h"
#include "kiln/core/error.h"
#include "kiln/core/registry.h"
#include "kiln/core/suggest.h"

namespace kiln::cli {
namespace {

void print_fields(const std::vector<FieldDoc>& fields, int indent) {
  for (const auto& f : fields) {
    std::string line =
        fmt::format("{:{}}{:<16} {} = {}", "", indent, f.key, f.type, f.default_value);
    if (!f.constraint.empty()) line += "  [" + f.constraint + "]";
    std::printf("%s\n%*s%s\n", line.c_str(), indent + 4, "", f.doc.c_str());
    print_fields(f.children, indent + 2);
  }
}

void print_registry(const RegistryBase& registry) {
  std::printf("%s: %s\n", registry.kind().c_str(), registry.doc().c_str());
  for (const auto& component : registry.documents()) {
    std::printf("\n  %s\n      %s\n", component.name.c_str(), component.doc.c_str());
    print_fields(component.options, 6);
  }
  std::printf("\n");
}

int list_components(const std::string& kind) {
  std::vector<std::string> kinds;
  for (const auto* registry : all_registries()) kinds.push_back(registry->kind());
  if (!kind.empty() && std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
    throw UsageError("unknown kind \"" + kind + "\"; " + suggestion_text(kind, kinds));
  for (const auto* registry : all_registries())
    if (kind.empty() || registry->kind() == kind) print_registry(*registry);
  return 0;
}

}  // namespace

void add_list_command(CLI::App& app, Action& action) {
  auto* list = app.add_subcommand("list", "List registered components and their options");
  auto kind = std::make_shared<std::string>();
  list->add_option("kind", *kind, "Only this kind (layer, model, dataset, loss, ...)");
  list->callback([&action, kind] { action = [kind] { return list_components(*kind); }; });
}

}  // namespace kiln::cli
