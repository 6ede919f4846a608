#pragma once
// The model's graph for TensorBoard's Graphs tab, written once when a run starts, into
// RUN/tensorboard/train (models/layer_graph.h finds it; tensorboard/graph_def.h writes it).
// Thread-safety: the training thread.

#include "kiln/experiment/open_model.h"
#include "kiln/models/model.h"
#include "kiln/tensorboard/event_log.h"

namespace kiln::experiment {

/// The graph of `model` for examples of `input`, as TensorBoard's nodes.
std::vector<tensorboard::GraphNode> model_graph(models::Model& model, const ModelInput& input);

/// Writes it to `log`'s train directory and flushes.
void write_model_graph(tensorboard::EventLog& log, models::Model& model, const ModelInput& input,
                       double wall_time);

}  // namespace kiln::experiment
