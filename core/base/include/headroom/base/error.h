#pragma once
#include <stdexcept>
#include <string>

namespace headroom {

// Every failure that reaches a user is one line: "<file>: <what is wrong>". Thrown by the loader and the
// file writers; the CLI maps it to exit code 1, the GUI to a dialog that keeps the previous model.
class Error : public std::runtime_error
{
public:
    using std::runtime_error::runtime_error;
};

} // namespace headroom
