// The recipe of a transpose: one transpose step.
#pragma once

#include <memory>

#include "core/job.hpp"

namespace spgemmd::core {

std::shared_ptr<job> transpose_job(pin a);

}  // namespace spgemmd::core
