// The roofline plot of the kernels whose FLOP and byte counters were read
// (counter_stats.h): achieved FLOP/s against arithmetic intensity on log
// scales, under each device's roof, min(peak FLOP/s, intensity × peak
// bytes/s), whose ridge is at peak FLOP/s ÷ peak bytes/s.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "gtap/readers/counter_stats.h"

namespace gtap::readers {

// An SVG picture: a file of its own (`standalone`: with the XML declaration
// and namespace) or an element to put in an HTML page. Each kernel with an
// intensity is a <circle class="point"> carrying data-kernel,
// data-intensity and data-flops; each device's roof a <polyline class="roof">
// and its ridge a <line class="ridge" data-intensity>.
void writeRooflineSvg(const std::vector<RooflinePoint>& points, const std::string& title, std::ostream& out,
                      bool standalone = true);

// A section of an HTML page (gtap flame --format=html): the plot and a
// table of each kernel's figures.
std::string rooflineHtmlSection(const std::vector<RooflinePoint>& points);

}  // namespace gtap::readers
