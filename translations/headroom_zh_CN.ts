<?xml version="1.0" encoding="utf-8"?>
<!DOCTYPE TS>
<TS version="2.1" language="zh_CN">
<context>
    <name>CoreWarning</name>
    <message>
        <source>%1: external weight data is not present (architecture only); sizes come from dims and dtypes</source>
        <translation>%1：外部权重数据不存在（仅架构）；大小由维度和数据类型得出</translation>
    </message>
    <message>
        <source>%1: built from a Hugging Face config.json (architecture only, no weights); sizes come from its hyper-parameters</source>
        <translation>%1：由 Hugging Face config.json 构建（仅架构，无权重）；大小由其超参数得出</translation>
    </message>
    <message>
        <source>%1: no symbol named &apos;%2&apos; (the model has none)</source>
        <translation>%1：没有名为“%2”的符号（该模型没有符号）</translation>
    </message>
    <message>
        <source>%1: no symbol named &apos;%2&apos; (symbols: %3)</source>
        <translation>%1：没有名为“%2”的符号（现有符号：%3）</translation>
    </message>
    <message>
        <source>%1: value %2 for &apos;%3&apos; ignored (must be &gt;= 1)</source>
        <translation>%1：“%3”的取值 %2 已忽略（必须 &gt;= 1）</translation>
    </message>
    <message>
        <source>%1: IR version %2 is outside the supported range 3-10; loading anyway</source>
        <translation>%1：IR 版本 %2 超出支持范围 3-10；仍然加载</translation>
    </message>
    <message>
        <source>%1: opset %2 is outside the supported range 7-18; loading anyway</source>
        <translation>%1：算子集版本 %2 超出支持范围 7-18；仍然加载</translation>
    </message>
    <message>
        <source>%1: node &apos;%2&apos;: custom op %3; its output shapes come from the file&apos;s declarations if any</source>
        <translation>%1：节点“%2”：自定义算子 %3；其输出形状取自文件中的声明（如有）</translation>
    </message>
    <message>
        <source>%1: initializer &apos;%2&apos; is defined twice; the first definition is used</source>
        <translation>%1：初始化器“%2”定义了两次；使用第一个定义</translation>
    </message>
    <message>
        <source>%1: initializer &apos;%2&apos;: external data location &apos;%3&apos; is outside the model&apos;s folder; not followed</source>
        <translation>%1：初始化器“%2”：外部数据位置“%3”在模型所在文件夹之外；未读取</translation>
    </message>
    <message>
        <source>%1: node &apos;%2&apos;: Constant without a value</source>
        <translation>%1：节点“%2”：Constant 没有值</translation>
    </message>
    <message>
        <source>%1: node &apos;%2&apos;: output &apos;%3&apos; is already defined elsewhere; renamed</source>
        <translation>%1：节点“%2”：输出“%3”已在别处定义；已重命名</translation>
    </message>
    <message>
        <source>%1: node &apos;%2&apos;: input &apos;%3&apos; is not produced by any node, input or initializer</source>
        <translation>%1：节点“%2”：输入“%3”不由任何节点、输入或初始化器产生</translation>
    </message>
    <message>
        <source>%1: graph output &apos;%2&apos; is not produced by any node</source>
        <translation>%1：图输出“%2”不由任何节点产生</translation>
    </message>
    <message>
        <source>%1: input &apos;%2&apos; has no declared shape; tensors that depend on it stay unknown</source>
        <translation>%1：输入“%2”没有声明形状；依赖它的张量形状未知</translation>
    </message>
    <message>
        <source>%1: more than 31 symbols; &apos;%2&apos; is fixed at 1</source>
        <translation>%1：符号超过 31 个；“%2”固定为 1</translation>
    </message>
    <message>
        <source>%1: node &apos;%2&apos; (%3): %4; 1 tensor has an unknown shape</source>
        <translation>%1：节点“%2”（%3）：%4；1 个张量形状未知</translation>
    </message>
    <message>
        <source>%1: node &apos;%2&apos; (%3): %4; %5 tensors have an unknown shape</source>
        <translation>%1：节点“%2”（%3）：%4；%5 个张量形状未知</translation>
    </message>
    <message>
        <source>%1: 1 tensor&apos;s declared shape (value_info) disagrees with Headroom&apos;s inference, first &apos;%2&apos;; the inferred shape is used</source>
        <translation>%1：1 个张量声明的形状（value_info）与 Headroom 的推断不一致，首个为“%2”；使用推断的形状</translation>
    </message>
    <message>
        <source>%1: %2 tensors&apos; declared shape (value_info) disagrees with Headroom&apos;s inference, first &apos;%3&apos;; the inferred shape is used</source>
        <translation>%1：%2 个张量声明的形状（value_info）与 Headroom 的推断不一致，首个为“%3”；使用推断的形状</translation>
    </message>
    <message>
        <source>%1: tensor &apos;%2&apos;: its size overflows 64-bit bytes</source>
        <translation>%1：张量“%2”：其字节数超出 64 位范围</translation>
    </message>
    <message>
        <source>no saved-for-backward rule for %1 (1 node, first %2): assumed it keeps its inputs and outputs</source>
        <translation>%1 没有“为反向传播保存”的规则（1 个节点，首个为 %2）：假定它保留全部输入和输出</translation>
    </message>
    <message>
        <source>no saved-for-backward rule for %1 (%2 nodes, first %3): assumed it keeps its inputs and outputs</source>
        <translation>%1 没有“为反向传播保存”的规则（%2 个节点，首个为 %3）：假定它保留全部输入和输出</translation>
    </message>
    <message>
        <source>--grad-checkpoint layers: no decoder-layer list (model.layers.N) in the layer tree; nothing is checkpointed</source>
        <translation>--grad-checkpoint layers：层树中没有解码层列表（model.layers.N）；没有设置任何检查点</translation>
    </message>
    <message>
        <source>dtype policy %1 is weight-only inference: evaluated as inference</source>
        <translation>精度策略 %1 仅用于推理（只量化权重）：按推理计算</translation>
    </message>
    <message>
        <source>%1 activation(s) have an unknown shape at this binding and count as 0 bytes</source>
        <translation>%1 个激活在当前取值下形状未知，按 0 字节计</translation>
    </message>
</context>
<context>
    <name>PdfReport</name>
    <message>
        <source>%1 (%2 bytes)</source>
        <translation>%1（%2 字节）</translation>
    </message>
    <message>
        <source>Cross-entropy</source>
        <translation>交叉熵</translation>
    </message>
    <message>
        <source>Mean squared error</source>
        <translation>均方误差</translation>
    </message>
    <message>
        <source>None (the graph computes its loss)</source>
        <translation>无（计算图自带损失）</translation>
    </message>
    <message>
        <source>Chunked cross-entropy (torchtune, 8 chunks)</source>
        <translation>分块交叉熵（torchtune，8 块）</translation>
    </message>
    <message>
        <source>Fused linear cross-entropy (Liger)</source>
        <translation>融合线性交叉熵（Liger）</translation>
    </message>
    <message>
        <source>Single GPU</source>
        <translation>单 GPU</translation>
    </message>
    <message>
        <source>DistributedDataParallel</source>
        <translation>DistributedDataParallel（分布式数据并行）</translation>
    </message>
    <message>
        <source>DataParallel</source>
        <translation>DataParallel（数据并行）</translation>
    </message>
    <message>
        <source>Balanced DataParallel</source>
        <translation>均衡 DataParallel（数据并行）</translation>
    </message>
    <message>
        <source>ZeRO stage 1</source>
        <translation>ZeRO 第 1 阶段</translation>
    </message>
    <message>
        <source>ZeRO stage 2</source>
        <translation>ZeRO 第 2 阶段</translation>
    </message>
    <message>
        <source>ZeRO stage 3</source>
        <translation>ZeRO 第 3 阶段</translation>
    </message>
    <message>
        <source>FSDP</source>
        <translation>FSDP（全分片数据并行）</translation>
    </message>
    <message>
        <source>FSDP NO_SHARD</source>
        <translation>FSDP NO_SHARD（不分片）</translation>
    </message>
    <message>
        <source>Exact (allocated bytes only)</source>
        <translation>精确（仅计已分配字节）</translation>
    </message>
    <message>
        <source>PyTorch caching allocator</source>
        <translation>PyTorch 缓存分配器</translation>
    </message>
    <message>
        <source>PyTorch caching allocator, expandable segments</source>
        <translation>PyTorch 缓存分配器，可扩展段</translation>
    </message>
    <message>
        <source>forward</source>
        <translation>前向</translation>
    </message>
    <message>
        <source>loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>backward</source>
        <translation>反向</translation>
    </message>
    <message>
        <source>optimizer step</source>
        <translation>优化器步骤</translation>
    </message>
    <message>
        <source>recompute</source>
        <translation>重计算</translation>
    </message>
    <message>
        <source>Smaller batch</source>
        <translation>减小批大小</translation>
    </message>
    <message>
        <source>Precision</source>
        <translation>精度</translation>
    </message>
    <message>
        <source>Activation checkpointing</source>
        <translation>激活检查点</translation>
    </message>
    <message>
        <source>Gradient accumulation</source>
        <translation>梯度累积</translation>
    </message>
    <message>
        <source>Inplace activations</source>
        <translation>原地激活</translation>
    </message>
    <message>
        <source>Freeze layers</source>
        <translation>冻结层</translation>
    </message>
    <message>
        <source>Sharding (ZeRO/FSDP)</source>
        <translation>分片（ZeRO/FSDP）</translation>
    </message>
    <message>
        <source>GPU 0 batch share</source>
        <translation>GPU 0 的批次份额</translation>
    </message>
    <message>
        <source>measured</source>
        <translation>已测量</translation>
    </message>
    <message>
        <source>no CUDA device</source>
        <translation>没有 CUDA 设备</translation>
    </message>
    <message>
        <source>built without CUDA</source>
        <translation>构建时未启用 CUDA</translation>
    </message>
    <message>
        <source>failed</source>
        <translation>失败</translation>
    </message>
    <message>
        <source>crashed</source>
        <translation>崩溃</translation>
    </message>
    <message>
        <source>timed out</source>
        <translation>超时</translation>
    </message>
    <message>
        <source>cancelled</source>
        <translation>已取消</translation>
    </message>
    <message>
        <source>yes</source>
        <translation>是</translation>
    </message>
    <message>
        <source>no</source>
        <translation>否</translation>
    </message>
    <message>
        <source>Headroom memory report · %1</source>
        <translation>Headroom 显存报告 · %1</translation>
    </message>
    <message>
        <source>GPU memory report: %1</source>
        <translation>GPU 显存报告：%1</translation>
    </message>
    <message>
        <source>Generated %1 by Headroom %2</source>
        <translation>由 Headroom %2 生成于 %1</translation>
    </message>
    <message>
        <source>Fine-tuning: LoRA r=%1, alpha %2 on %3; %4 trainable of %5 parameters</source>
        <translation>微调：LoRA r=%1，alpha %2，作用于 %3；可训练参数 %4 / 共 %5</translation>
    </message>
    <message>
        <source>PEFT&apos;s default targets</source>
        <translation>PEFT 的默认目标模块</translation>
    </message>
    <message>
        <source>; %1 adapters</source>
        <translation>；%1 适配器</translation>
    </message>
    <message>
        <source>; base weights %1%2 (%3), largest dequantized weight %4</source>
        <translation>；基础权重 %1%2（%3），最大的反量化权重 %4</translation>
    </message>
    <message>
        <source> + double quantization</source>
        <translation> + 双重量化</translation>
    </message>
    <message>
        <source>; checkpointing every decoder layer</source>
        <translation>；每个解码层做梯度检查点</translation>
    </message>
    <message>
        <source>Needs %1 on the GPU (no GPU selected)</source>
        <translation>需要 %1 GPU 显存（未选择 GPU）</translation>
    </message>
    <message>
        <source>Fits on %1 (%2) with %3 headroom</source>
        <translation>可以放进 %1（%2），剩余 %3</translation>
    </message>
    <message>
        <source>Does not fit on %1 (%2): needs %3, %4 more than it has</source>
        <translation>放不进 %1（%2）：需要 %3，比可用显存多 %4</translation>
    </message>
    <message>
        <source>Peak allocated: %1</source>
        <translation>已分配峰值：%1</translation>
    </message>
    <message>
        <source>Needed on the GPU: %1</source>
        <translation>GPU 上所需：%1</translation>
    </message>
    <message>
        <source>Largest batch that fits: %1</source>
        <translation>能放下的最大批大小：%1</translation>
    </message>
    <message>
        <source>Not even batch 1 fits</source>
        <translation>连批大小 1 都放不下</translation>
    </message>
    <message>
        <source>Where the memory goes</source>
        <translation>显存用在哪里</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>parameters and buffers at the policy&apos;s dtype</source>
        <translation>按精度策略的数据类型计算的参数和缓冲区</translation>
    </message>
    <message>
        <source>  of which buffers</source>
        <translation>  其中缓冲区</translation>
    </message>
    <message>
        <source>running statistics, masks, shape constants</source>
        <translation>运行统计量、掩码、形状常量</translation>
    </message>
    <message>
        <source>Gradients</source>
        <translation>梯度</translation>
    </message>
    <message>
        <source>one per trainable parameter</source>
        <translation>每个可训练参数一份</translation>
    </message>
    <message>
        <source>Optimizer states</source>
        <translation>优化器状态</translation>
    </message>
    <message>
        <source>Master weights</source>
        <translation>主权重</translation>
    </message>
    <message>
        <source>FP32 copies kept by mixed precision</source>
        <translation>混合精度保留的 FP32 副本</translation>
    </message>
    <message>
        <source>Activations saved for backward</source>
        <translation>为反向传播保存的激活</translation>
    </message>
    <message>
        <source>distinct tensors autograd keeps</source>
        <translation>autograd 保留的不重复张量</translation>
    </message>
    <message>
        <source>Activations at the peak</source>
        <translation>峰值时的激活</translation>
    </message>
    <message>
        <source>saved plus transient tensors live at the peak</source>
        <translation>峰值时存活的已保存张量与临时张量</translation>
    </message>
    <message>
        <source>Peak allocated</source>
        <translation>已分配峰值</translation>
    </message>
    <message>
        <source>maximum of the simulated timeline</source>
        <translation>模拟时间线的最大值</translation>
    </message>
    <message>
        <source>Reserved peak</source>
        <translation>保留峰值</translation>
    </message>
    <message>
        <source>the same through the caching allocator model</source>
        <translation>经缓存分配器模型计算的同一峰值</translation>
    </message>
    <message>
        <source>Workspace</source>
        <translation>工作区</translation>
    </message>
    <message>
        <source>cuBLAS/cuDNN scratch</source>
        <translation>cuBLAS/cuDNN 临时空间</translation>
    </message>
    <message>
        <source>CUDA context</source>
        <translation>CUDA 上下文</translation>
    </message>
    <message>
        <source>per-process driver and kernel images</source>
        <translation>每个进程的驱动与内核映像</translation>
    </message>
    <message>
        <source>Needed on the GPU</source>
        <translation>GPU 上所需</translation>
    </message>
    <message>
        <source>peak (or reserved) + workspace + context</source>
        <translation>峰值（或保留峰值）+ 工作区 + 上下文</translation>
    </message>
    <message>
        <source>Classic estimate</source>
        <translation>经典估算</translation>
    </message>
    <message>
        <source>the rule of thumb, for comparison</source>
        <translation>经验公式，用于对比</translation>
    </message>
    <message>
        <source>Category</source>
        <translation>类别</translation>
    </message>
    <message>
        <source>Size</source>
        <translation>大小</translation>
    </message>
    <message>
        <source>Bytes</source>
        <translation>字节</translation>
    </message>
    <message>
        <source>What it is</source>
        <translation>含义</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>%1 = %2 (from %3)</source>
        <translation>%1 = %2（来自 %3）</translation>
    </message>
    <message>
        <source>File</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>SHA-256</source>
        <translation>SHA-256 校验值</translation>
    </message>
    <message>
        <source>File size</source>
        <translation>文件大小</translation>
    </message>
    <message>
        <source>Producer</source>
        <translation>生成工具</translation>
    </message>
    <message>
        <source>(not recorded)</source>
        <translation>（未记录）</translation>
    </message>
    <message>
        <source>Graph</source>
        <translation>计算图</translation>
    </message>
    <message>
        <source>IR version</source>
        <translation>IR 版本</translation>
    </message>
    <message>
        <source>Opsets</source>
        <translation>算子集</translation>
    </message>
    <message>
        <source>Layers (graph nodes)</source>
        <translation>层数（图节点）</translation>
    </message>
    <message>
        <source>Buffers</source>
        <translation>缓冲区</translation>
    </message>
    <message>
        <source>%1 elements, %2</source>
        <translation>%1 个元素，%2</translation>
    </message>
    <message>
        <source>Symbols</source>
        <translation>符号</translation>
    </message>
    <message>
        <source>none (all shapes are static)</source>
        <translation>无（所有形状都是静态的）</translation>
    </message>
    <message>
        <source>External data</source>
        <translation>外部数据</translation>
    </message>
    <message>
        <source>missing (sizes come from the dims; no weight bytes are read)</source>
        <translation>缺失（大小来自维度信息；不读取任何权重字节）</translation>
    </message>
    <message>
        <source>Configuration</source>
        <translation>配置</translation>
    </message>
    <message>
        <source>Mode</source>
        <translation>模式</translation>
    </message>
    <message>
        <source>Batch</source>
        <translation>批大小</translation>
    </message>
    <message>
        <source>%1 (global)</source>
        <translation>%1（全局）</translation>
    </message>
    <message>
        <source> (%1 bytes per parameter)</source>
        <translation>（每个参数 %1 字节）</translation>
    </message>
    <message>
        <source>Optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>损失函数</translation>
    </message>
    <message>
        <source>Checkpoint segments</source>
        <translation>检查点分段数</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>%1 steps</source>
        <translation>%1 步</translation>
    </message>
    <message>
        <source>Frozen layers</source>
        <translation>冻结的层</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>GPU</source>
        <translation>显卡</translation>
    </message>
    <message>
        <source>%1, %2</source>
        <translation>%1，%2</translation>
    </message>
    <message>
        <source>none selected</source>
        <translation>未选择</translation>
    </message>
    <message>
        <source>GPUs</source>
        <translation>GPU 数量</translation>
    </message>
    <message>
        <source>%1 × %2</source>
        <translation>%1 × %2</translation>
    </message>
    <message>
        <source>CPU offload</source>
        <translation>CPU 卸载</translation>
    </message>
    <message>
        <source>Allocator</source>
        <translation>分配器</translation>
    </message>
    <message>
        <source>Safety margin</source>
        <translation>安全余量</translation>
    </message>
    <message>
        <source>CLI equivalent</source>
        <translation>等效命令行</translation>
    </message>
    <message>
        <source>Verdict per GPU (%1)</source>
        <translation>每个 GPU 的结论（%1）</translation>
    </message>
    <message>
        <source>GPU %1</source>
        <translation>%1 号 GPU</translation>
    </message>
    <message>
        <source>fits</source>
        <translation>放得下</translation>
    </message>
    <message>
        <source>does not fit</source>
        <translation>放不下</translation>
    </message>
    <message>
        <source>Activations</source>
        <translation>激活</translation>
    </message>
    <message>
        <source>Communication</source>
        <translation>通信</translation>
    </message>
    <message>
        <source>Peak</source>
        <translation>峰值</translation>
    </message>
    <message>
        <source>Needed</source>
        <translation>所需</translation>
    </message>
    <message>
        <source>Verdict</source>
        <translation>结论</translation>
    </message>
    <message>
        <source>Would it fit on other GPUs?</source>
        <translation>能放进其他 GPU 吗？</translation>
    </message>
    <message>
        <source>The same configuration on each preset, with that GPU&apos;s own context and workspace defaults.</source>
        <translation>在每个预设 GPU 上使用相同配置，并采用该 GPU 自己的默认上下文和工作区大小。</translation>
    </message>
    <message>
        <source>fits, %1 free</source>
        <translation>放得下，剩余 %1</translation>
    </message>
    <message>
        <source>short by %1</source>
        <translation>还差 %1</translation>
    </message>
    <message>
        <source>Capacity</source>
        <translation>容量</translation>
    </message>
    <message>
        <source>Largest batch</source>
        <translation>最大批大小</translation>
    </message>
    <message>
        <source>Breakdown</source>
        <translation>分项</translation>
    </message>
    <message>
        <source>Each category of the memory model at the peak of one iteration, next to what the GPU offers. Weights, gradients, optimizer states and master weights persist; activations are those live at the peak; workspace and context are the GPU&apos;s fixed overheads.</source>
        <translation>一次迭代峰值时显存模型的各个类别，与 GPU 可用显存并列显示。权重、梯度、优化器状态和主权重常驻显存；激活是峰值时存活的部分；工作区和上下文是 GPU 的固定开销。</translation>
    </message>
    <message>
        <source>Timeline</source>
        <translation>时间线</translation>
    </message>
    <message>
        <source>The peak (%1) is reached at step %2, during %3 of %4.</source>
        <translation>峰值（%1）出现在第 %2 步，即 %4 的%3阶段。</translation>
    </message>
    <message>
        <source>The peak (%1) is reached at step %2, during the %3.</source>
        <translation>峰值（%1）出现在第 %2 步，处于%3阶段。</translation>
    </message>
    <message>
        <source>Allocated bytes after every step of one simulated iteration (forward, loss, backward, optimizer step). %1</source>
        <translation>一次模拟迭代（前向、损失、反向、优化器步骤）中每一步之后的已分配字节数。%1</translation>
    </message>
    <message>
        <source>Batch size</source>
        <translation>批大小</translation>
    </message>
    <message>
        <source>Memory needed on the GPU against the batch size; the horizontal line is the GPU&apos;s capacity. Every point is a full re-evaluation, not an extrapolation.</source>
        <translation>GPU 所需显存随批大小的变化；水平线是 GPU 的容量。每个点都是完整重新计算的结果，而不是外推。</translation>
    </message>
    <message>
        <source>Peak allocated memory and recompute cost against the number of checkpoint segments (torch.utils.checkpoint.checkpoint_sequential). %1</source>
        <translation>已分配峰值和重计算开销随检查点分段数（torch.utils.checkpoint.checkpoint_sequential）的变化。%1</translation>
    </message>
    <message>
        <source>Top layers by memory</source>
        <translation>显存占用最多的层</translation>
    </message>
    <message>
        <source>#</source>
        <translation>序号</translation>
    </message>
    <message>
        <source>Layer</source>
        <translation>层</translation>
    </message>
    <message>
        <source>Params</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Saved</source>
        <translation>已保存</translation>
    </message>
    <message>
        <source>Share</source>
        <translation>占比</translation>
    </message>
    <message>
        <source>Tensors live at the peak</source>
        <translation>峰值时存活的张量</translation>
    </message>
    <message>
        <source>(model input)</source>
        <translation>（模型输入）</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>Tensor</source>
        <translation>张量</translation>
    </message>
    <message>
        <source>Produced by</source>
        <translation>产生者</translation>
    </message>
    <message>
        <source>Shape</source>
        <translation>形状</translation>
    </message>
    <message>
        <source>What would reduce it</source>
        <translation>如何降低显存</translation>
    </message>
    <message>
        <source>Each change was re-evaluated with everything else kept; savings are measured, not assumed.</source>
        <translation>每项改动都在其他设置不变的情况下重新计算；节省量是算出来的，而非假设。</translation>
    </message>
    <message>
        <source>Change</source>
        <translation>改动</translation>
    </message>
    <message>
        <source>Setting</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>Saves</source>
        <translation>节省</translation>
    </message>
    <message>
        <source>Needed after</source>
        <translation>改动后所需</translation>
    </message>
    <message numerus="yes">
        <source>Layer table (%n layers)</source>
        <translation>
            <numerusform>层表（共 %n 层）</numerusform>
        </translation>
    </message>
    <message>
        <source>Every graph node in topological order, at this configuration. Activation: the node&apos;s outputs; saved: what it keeps for backward (a tensor saved by several nodes is counted once, at the first). The CSV and JSON exports carry the same rows in bytes.</source>
        <translation>按拓扑顺序列出此配置下的每个图节点。激活：节点的输出；已保存：节点为反向传播保留的数据（被多个节点保存的张量只在第一个节点处计一次）。CSV 和 JSON 导出包含相同的行，单位为字节。</translation>
    </message>
    <message>
        <source>Op</source>
        <translation>算子</translation>
    </message>
    <message>
        <source>Output shape</source>
        <translation>输出形状</translation>
    </message>
    <message>
        <source>Activation</source>
        <translation>激活</translation>
    </message>
    <message>
        <source>Measured on a GPU</source>
        <translation>在 GPU 上的实测</translation>
    </message>
    <message>
        <source>The probe&apos;s result could not be read: %1</source>
        <translation>无法读取探针结果：%1</translation>
    </message>
    <message>
        <source>The probe did not measure (%1): %2</source>
        <translation>探针未进行测量（%1）：%2</translation>
    </message>
    <message>
        <source>headroom-probe replayed this configuration&apos;s allocations on %1 (%2) with real cudaMalloc/cudaFree and read the device&apos;s memory after every event.</source>
        <translation>headroom-probe 在 %1（%2）上用真实的 cudaMalloc/cudaFree 重放了此配置的分配，并在每个事件之后读取设备显存。</translation>
    </message>
    <message>
        <source>Peak allocated (exact replay)</source>
        <translation>已分配峰值（精确重放）</translation>
    </message>
    <message>
        <source>Reserved peak (caching replay)</source>
        <translation>保留峰值（缓存重放）</translation>
    </message>
    <message>
        <source>Workspace (cuBLAS + cuDNN)</source>
        <translation>工作区（cuBLAS + cuDNN）</translation>
    </message>
    <message>
        <source>Largest batch that fits</source>
        <translation>能放下的最大批大小</translation>
    </message>
    <message>
        <source>≥ %1</source>
        <translation>≥ %1</translation>
    </message>
    <message>
        <source>Figure</source>
        <translation>指标</translation>
    </message>
    <message>
        <source>Predicted</source>
        <translation>预测值</translation>
    </message>
    <message>
        <source>Measured</source>
        <translation>实测值</translation>
    </message>
    <message>
        <source>Difference</source>
        <translation>差值</translation>
    </message>
    <message>
        <source>Measured peak by category</source>
        <translation>按类别的实测峰值</translation>
    </message>
    <message>
        <source>The plan at batch %1 ran out of memory on the device.</source>
        <translation>批大小为 %1 的方案在设备上显存不足。</translation>
    </message>
    <message>
        <source>Measured bytes are device memory above the baseline before the replay (cudaMemGetInfo); the difference to the prediction is allocator rounding, driver-side allocations and anything else running on the GPU.</source>
        <translation>实测字节数是相对于重放前基线增加的设备显存（cudaMemGetInfo）；与预测值的差异来自分配器取整、驱动端分配以及 GPU 上运行的其他程序。</translation>
    </message>
    <message>
        <source>Assumptions and formulas</source>
        <translation>假设与公式</translation>
    </message>
    <message>
        <source>Every figure in this report is computed from the ONNX graph&apos;s shapes and dtypes at the configuration above; no weight bytes are read and nothing is run. Sizes are in %1 units (KiB = 1024 bytes); the JSON export has every figure in bytes.</source>
        <translation>本报告中的每个数字都是根据上述配置下 ONNX 计算图的形状和数据类型算出的；不读取任何权重字节，也不运行任何东西。大小采用%1单位（KiB = 1024 字节）；JSON 导出中所有数字都以字节为单位。</translation>
    </message>
    <message>
        <source>binary</source>
        <translation>二进制</translation>
    </message>
    <message>
        <source>decimal</source>
        <translation>十进制</translation>
    </message>
    <message>
        <source>Weights = Σ parameter elements × bytes per element of the policy (%1) + buffers = %2. Under AMP the 16-bit copies autocast caches during forward are added.</source>
        <translation>权重 = Σ 参数元素数 × 精度策略（%1）下每个元素的字节数 + 缓冲区 = %2。使用 AMP 时还要加上 autocast 在前向过程中缓存的 16 位副本。</translation>
    </message>
    <message>
        <source>Gradients = one per trainable, unfrozen parameter (%1 elements) at the gradient dtype = %2.</source>
        <translation>梯度 = 每个可训练且未冻结的参数（%1 个元素）一份，按梯度的数据类型计算 = %2。</translation>
    </message>
    <message>
        <source>Optimizer states = bytes per trainable parameter × parameters: %1 keeps %2 = %3 (SGD 0, momentum 4, Adam/AdamW 8, Adagrad 4, RMSprop 4 (+4 momentum, +4 centered), Adadelta 8, Lion 4, LAMB 8, 8-bit Adam 2 bytes per parameter; Adafactor keeps factored row and column statistics).</source>
        <translation>优化器状态 = 每个可训练参数的字节数 × 参数个数：%1 保留%2 = %3（每个参数：SGD 0、动量 4、Adam/AdamW 8、Adagrad 4、RMSprop 4（动量 +4，中心化 +4）、Adadelta 8、Lion 4、LAMB 8、8 位 Adam 2 字节；Adafactor 保留分解后的行、列统计量）。</translation>
    </message>
    <message>
        <source>%1 bytes per parameter</source>
        <translation>每个参数 %1 字节</translation>
    </message>
    <message>
        <source>nothing</source>
        <translation>零字节</translation>
    </message>
    <message>
        <source>Master weights = FP32 copy of every trainable parameter under mixed precision = %1.</source>
        <translation>主权重 = 混合精度下每个可训练参数的 FP32 副本 = %1。</translation>
    </message>
    <message>
        <source>Activations saved for backward = the distinct tensors PyTorch&apos;s autograd keeps for each op (derivatives.yaml: Conv saves its input, ReLU its output, MatMul its operands, BatchNorm its input and statistics, Dropout a 1-byte mask, ...), each storage counted once = %1.</source>
        <translation>为反向传播保存的激活 = PyTorch autograd 为每个算子保留的不重复张量（依据 derivatives.yaml：Conv 保存输入，ReLU 保存输出，MatMul 保存操作数，BatchNorm 保存输入和统计量，Dropout 保存 1 字节掩码……），每块存储只计一次 = %1。</translation>
    </message>
    <message>
        <source>Loss: %1 on the first output; it keeps the log-probabilities and creates the output&apos;s gradient.</source>
        <translation>损失：在第一个输出上计算%1；它保留对数概率，并产生输出的梯度。</translation>
    </message>
    <message>
        <source>Peak allocated = the maximum over the simulated iteration: forward allocates each output and frees it after its last consumer unless it is saved; backward allocates input gradients and frees saved tensors once used; the optimizer step follows. Peak = %1, reached at step %2 of %3.</source>
        <translation>已分配峰值 = 模拟迭代过程中的最大值：前向为每个输出分配显存，并在最后一个使用者之后释放（被保存的除外）；反向为输入梯度分配显存，并在用完后释放已保存的张量；随后是优化器步骤。峰值 = %1，出现在第 %2 步（共 %3 步）。</translation>
    </message>
    <message>
        <source>Reserved peak = the same allocations replayed through a model of PyTorch&apos;s caching allocator (512-byte rounding; requests up to 1 MiB from 2 MiB segments, up to 10 MiB from 20 MiB segments, larger ones rounded to 2 MiB; best fit with splitting; freed blocks stay cached) = %1; this is what nvidia-smi shows besides the context.</source>
        <translation>保留峰值 = 把同样的分配在 PyTorch 缓存分配器模型中重放的结果（按 512 字节取整；不超过 1 MiB 的请求来自 2 MiB 的段，不超过 10 MiB 的来自 20 MiB 的段，更大的按 2 MiB 取整；最佳适配并可拆分；释放的块保留在缓存中）= %1；这就是 nvidia-smi 显示的数值（不含上下文）。</translation>
    </message>
    <message>
        <source>Workspace %1 and CUDA context %2 are the defaults for %3 until the probe measures them.</source>
        <translation>工作区 %1 和 CUDA 上下文 %2 是 %3 的默认值，在探针实测之前一直使用。</translation>
    </message>
    <message>
        <source>Needed = %1 + workspace + context = %2; it fits when needed + the safety margin (%3) ≤ capacity (%4). Headroom = capacity − needed = %5.</source>
        <translation>所需 = %1 + 工作区 + 上下文 = %2；当所需 + 安全余量（%3）≤ 容量（%4）时即可放下。余量 = 容量 − 所需 = %5。</translation>
    </message>
    <message>
        <source>peak allocated</source>
        <translation>已分配峰值</translation>
    </message>
    <message>
        <source>reserved peak</source>
        <translation>保留峰值</translation>
    </message>
    <message>
        <source>Largest batch = the largest batch whose need fits, found by searching the fitted shape functions (every tensor&apos;s size as a function of the symbols) = %1.</source>
        <translation>最大批大小 = 所需显存仍能放下的最大批大小，通过搜索拟合出的形状函数（每个张量的大小关于符号的函数）得到 = %1。</translation>
    </message>
    <message>
        <source>Checkpointing with %1 segments keeps only each segment&apos;s input during forward and recomputes the segment before its backward: %2 extra multiply-accumulates.</source>
        <translation>分为 %1 段的检查点在前向时只保留每段的输入，并在该段反向之前重新计算：额外 %2 次乘加运算。</translation>
    </message>
    <message>
        <source>Gradient accumulation over %1 steps: activations at the micro-batch, gradients persist across micro-steps.</source>
        <translation>梯度累积 %1 步：激活按微批次计算，梯度在各微步之间保留。</translation>
    </message>
    <message>
        <source>Inplace activations change the transient peak, not what is saved: here they make a difference of %1.</source>
        <translation>原地激活改变的是临时峰值，而不是保存的内容：在这里相差 %1。</translation>
    </message>
    <message>
        <source>Classic estimate = parameters × n + batch × Σ outputs × 2 (n = 2 for SGD, 4 for Adam) = %1, against the peak of %2: the rule of thumb is off by %3.</source>
        <translation>经典估算 = 参数 × n + 批大小 × Σ 输出 × 2（SGD 时 n = 2，Adam 时 n = 4）= %1，而峰值为 %2：经验公式偏差 %3。</translation>
    </message>
    <message>
        <source>%1 GPUs with %2: each GPU&apos;s share is evaluated separately; DDP adds two 25 MiB gradient buckets, DataParallel gathers outputs and computes the loss on GPU 0, ZeRO/FSDP shard optimizer states, gradients and parameters.</source>
        <translation>%1 个 GPU，采用 %2：每个 GPU 的份额分别计算；DDP 额外需要两个 25 MiB 的梯度桶，DataParallel 在 GPU 0 上汇集输出并计算损失，ZeRO/FSDP 对优化器状态、梯度和参数分片。</translation>
    </message>
    <message numerus="yes">
        <source>%n activation(s) have an unknown shape at this configuration and count as zero bytes.</source>
        <translation>
            <numerusform>在此配置下有 %n 个激活的形状未知，按零字节计。</numerusform>
        </translation>
    </message>
    <message>
        <source>Warnings</source>
        <translation>警告</translation>
    </message>
    <message>
        <source>… and %1 more (see the JSON export).</source>
        <translation>……还有 %1 条（见 JSON 导出）。</translation>
    </message>
    <message>
        <source>cannot start the PDF</source>
        <translation>无法开始写入 PDF</translation>
    </message>
    <message>
        <source>cannot add a page to the PDF</source>
        <translation>无法向 PDF 添加页面</translation>
    </message>
    <message>
        <source>cannot finish the PDF</source>
        <translation>无法完成 PDF</translation>
    </message>
    <message>
        <source>  of which autocast copies</source>
        <translation>  其中 autocast 副本</translation>
    </message>
    <message>
        <source>16-bit weight copies cached during forward</source>
        <translation>前向过程中缓存的 16 位权重副本</translation>
    </message>
    <message>
        <source>Model input</source>
        <translation>模型输入</translation>
    </message>
    <message>
        <source>the input batch, kept alive by the data loader</source>
        <translation>输入批次，由数据加载器保持存活</translation>
    </message>
    <message>
        <source>Loss tensors</source>
        <translation>损失相关张量</translation>
    </message>
    <message>
        <source>log-probabilities and the output&apos;s gradient at the peak</source>
        <translation>峰值时的对数概率和输出梯度</translation>
    </message>
    <message>
        <source>The layers whose tensors autograd keeps for backward hold the most; the share is of all saved activations.</source>
        <translation>这些层的张量被 autograd 为反向传播保留得最多；占比相对于全部已保存激活。</translation>
    </message>
    <message>
        <source>The layers with the largest outputs; the share is of the activations live at the peak.</source>
        <translation>输出最大的层；占比相对于峰值时存活的激活。</translation>
    </message>
    <message>
        <source>The lowest peak, %1, is at k = %2 segments, for %3 extra forward multiply-accumulates.</source>
        <translation>分为 k = %2 段时峰值最低，为 %1，代价是额外 %3 次前向乘加运算。</translation>
    </message>
    <message>
        <source>(parameter)</source>
        <translation>（参数）</translation>
    </message>
    <message>
        <source>(buffer)</source>
        <translation>（缓冲区）</translation>
    </message>
    <message numerus="yes">
        <source>Fit unknown: %n activation size(s) could not be determined; the figures above leave them out</source>
        <translation>
            <numerusform>适配未知：%n 个激活的大小无法确定；上面的数字未包含它们</numerusform>
        </translation>
    </message>
    <message>
        <source>Fit known: every tensor size is determined at this configuration</source>
        <translation>适配已知：在此配置下所有张量大小均已确定</translation>
    </message>
    <message numerus="yes">
        <source>Layer table (%n rows)</source>
        <translation>
            <numerusform>层表（%n 行）</numerusform>
        </translation>
    </message>
    <message>
        <source>The layer tree to depth %1, as the app opens it; the exporter&apos;s shape arithmetic (Shape, Gather, Concat, ... on shape-sized integers) is folded into one row per layer. Activation: the layer&apos;s outputs; saved: what it keeps for backward. The CSV export lists every graph node in bytes.</source>
        <translation>层树展开到深度 %1，与应用中打开时相同；导出器的形状运算（在形状大小的整数上进行的 Shape、Gather、Concat 等）在每层折叠为一行。激活：该层的输出；保存：为反向传播保留的内容。CSV 导出以字节列出每个图节点。</translation>
    </message>
    <message>
        <source>What makes it fit</source>
        <translation>怎样能放下</translation>
    </message>
    <message>
        <source>Serving</source>
        <translation>推理服务</translation>
    </message>
    <message>
        <source>Engine</source>
        <translation>引擎</translation>
    </message>
    <message>
        <source>vLLM %1 (V1 startup rules, docs/SERVING.md)</source>
        <translation>vLLM %1（V1 启动规则，见 docs/SERVING.md）</translation>
    </message>
    <message>
        <source>Settings</source>
        <translation>设置</translation>
    </message>
    <message>
        <source>max_model_len %1, max_num_seqs %2, TP %3, KV cache %4, gpu_memory_utilization %5</source>
        <translation>max_model_len %1，max_num_seqs %2，张量并行 %3，KV 缓存 %4，gpu_memory_utilization %5</translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation>KV 缓存</translation>
    </message>
    <message>
        <source>%1 = %2 blocks = %3 tokens; %4 requests of max_model_len at once</source>
        <translation>%1 = %2 个块 = %3 个词元；可同时容纳 %4 个 max_model_len 长度的请求</translation>
    </message>
    <message>
        <source>What changes it</source>
        <translation>如何改变</translation>
    </message>
    <message>
        <source>Hugging Face generate() (transformers %1, sdpa, greedy)</source>
        <translation>Hugging Face generate()（transformers %1，sdpa，贪心解码）</translation>
    </message>
    <message>
        <source>prompt %1 + %2 new tokens, batch %3, %4 cache</source>
        <translation>提示 %1 + 新生成 %2 个词元，批大小 %3，%4 缓存</translation>
    </message>
    <message>
        <source>%1 at the prefill, %2 at the last step</source>
        <translation>预填充时 %1，最后一步 %2</translation>
    </message>
    <message>
        <source>%1 after the prefill, %2 at the end</source>
        <translation>预填充后 %1，结束时 %2</translation>
    </message>
    <message>
        <source>Longest context</source>
        <translation>最长上下文</translation>
    </message>
    <message>
        <source>Share of the device</source>
        <translation>占显存比例</translation>
    </message>
    <message>
        <source>Dequantized weight</source>
        <translation>反量化权重</translation>
    </message>
    <message>
        <source>the largest 4/8-bit weight unpacked to the compute dtype, held at the peak</source>
        <translation>解包为计算数据类型的最大 4/8 位权重，在峰值时存活</translation>
    </message>
    <message>
        <source>Chunked cross-entropy (litgpt, 16-bit, no upcast)</source>
        <translation>分块交叉熵（litgpt，16 位，不提升为 fp32）</translation>
    </message>
    <message>
        <source>Activation offloading</source>
        <translation>激活卸载</translation>
    </message>
    <message>
        <source>With padded batches the reserved peak is the highest of the steps with %1 up to %2, each replayed on its own: %3 reaches it. The allocated peak and the verdict are the longest step&apos;s, since the allocator frees its cache and retries before it runs out of memory.</source>
        <translation>按批填充时，预留峰值取 %1 最长到 %2 的各步中最高的一个，每一步单独重放：%3 时达到。已分配峰值和是否放得下按最长的一步计，因为分配器在内存耗尽之前会释放缓存并重试。</translation>
    </message>
    <message>
        <source>Padded batches</source>
        <translation>按批填充</translation>
    </message>
    <message>
        <source>%1 varies from step to step up to %2</source>
        <translation>%1 逐步变化，最长到 %2</translation>
    </message>
    <message>
        <source>Training loop</source>
        <translation>训练循环</translation>
    </message>
    <message>
        <source>custom: keeps the output to the end of the step</source>
        <translation>自定义：输出一直保留到该步结束</translation>
    </message>
    <message>
        <source>transformers</source>
        <translation>transformers 库</translation>
    </message>
    <message>
        <source>before 4.46: fp32 logits, shifted fp32 copy for the loss</source>
        <translation>4.46 之前：fp32 logits，损失用移位后的 fp32 副本</translation>
    </message>
    <message>
        <source>Fits on %1 (%2) at capacity: the cache fills the card</source>
        <translation>可以放进 %1（%2），但已满载：缓存占满整张卡</translation>
    </message>
    <message>
        <source>Fine-tuning: IA3 on %1; %2 trainable of %3 parameters</source>
        <translation>微调：IA3，作用于 %1；可训练参数 %2 / 共 %3</translation>
    </message>
    <message>
        <source>Parameters</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>%1 (%2 elements: %3 trainable, %4 frozen; %5 held)</source>
        <extracomment>%1 all parameters (short), %2 their exact count, %3 trainable ones, %4 frozen ones, %5 the bytes held</extracomment>
        <translation>%1（%2 个元素：可训练 %3，冻结 %4；占用 %5）</translation>
    </message>
</context>
<context>
    <name>PlanText</name>
    <message>
        <source>paged AdamW</source>
        <translation>分页 AdamW</translation>
    </message>
    <message>
        <source>per-layer checkpointing</source>
        <translation>逐层检查点</translation>
    </message>
    <message>
        <source>shard across the GPUs (%1)</source>
        <translation>在各 GPU 间分片（%1）</translation>
    </message>
    <message>
        <source>8-bit optimizer state (%1)</source>
        <translation>8 位优化器状态（%1）</translation>
    </message>
    <message>
        <source>pure bf16</source>
        <translation>纯 bf16</translation>
    </message>
    <message>
        <source>QLoRA: 4-bit NF4 base weights</source>
        <translation>QLoRA：4 位 NF4 基础权重</translation>
    </message>
    <message>
        <source>CPU offload</source>
        <translation>CPU 卸载</translation>
    </message>
    <message>
        <source>sequence length %1</source>
        <translation>序列长度 %1</translation>
    </message>
    <message>
        <source>batch %1</source>
        <translation>批大小 %1</translation>
    </message>
    <message>
        <source>No change Headroom knows of makes it fit.</source>
        <translation>Headroom 已知的改动都无法使其放下。</translation>
    </message>
    <message>
        <source>%1 (−%2)</source>
        <extracomment>a step of the plan to fit: %1 the change, %2 the memory it saves</extracomment>
        <translation>%1（节省 %2）</translation>
    </message>
    <message>
        <source>Closest plan, still too big: %1 → needs %2.</source>
        <extracomment>%1 the steps, %2 the need after them</extracomment>
        <translation>最接近的方案仍然放不下：%1 → 需要 %2。</translation>
    </message>
    <message>
        <source>To fit: %1 → needs %2, %3 to spare.</source>
        <extracomment>%1 the steps, %2 the need after them, %3 what is left on the GPU</extracomment>
        <translation>放下的方案：%1 → 需要 %2，剩余 %3。</translation>
    </message>
    <message>
        <source>LoRA adapters (r %1, PEFT defaults) instead of full fine-tuning</source>
        <translation>用 LoRA 适配器（r %1，PEFT 默认值）代替全量微调</translation>
    </message>
    <message>
        <source>micro-batch %1 × %2 accumulation steps</source>
        <extracomment>%1 the batch of one step, %2 the steps</extracomment>
        <translation>微批次 %1 × %2 步梯度累积</translation>
    </message>
    <message>
        <source>%1 checkpoint segments</source>
        <translation>%1 个检查点分段</translation>
    </message>
    <message>
        <source>%1 × %2 (%3)</source>
        <extracomment>%1 the GPU count, %2 the GPU, %3 how the model is sharded over them</extracomment>
        <translation>%1 块 %2（%3）</translation>
    </message>
    <message>
        <source>a larger GPU (%1)</source>
        <translation>更大的 GPU（%1）</translation>
    </message>
    <message>
        <source>Nothing on this GPU makes it fit: with %1 → needs %2, %3 to spare.</source>
        <extracomment>%1 the steps (ending with the hardware), %2 the need after them, %3 what is left</extracomment>
        <translation>这块 GPU 上没有办法放下：改用 %1 → 需要 %2，剩余 %3。</translation>
    </message>
    <message>
        <source>LoRA adapters (r %1, every linear layer: PEFT has no default targets for the model) instead of full fine-tuning</source>
        <translation>改用 LoRA 适配器（r %1，所有线性层：PEFT 没有该模型的默认目标模块）代替全量微调</translation>
    </message>
</context>
<context>
    <name>ReportDocument</name>
    <message>
        <source>Page %1</source>
        <translation>第 %1 页</translation>
    </message>
</context>
<context>
    <name>gui</name>
    <message>
        <source>Training</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>Inference</source>
        <translation>推理</translation>
    </message>
    <message>
        <source>FP32</source>
        <translation>FP32（单精度）</translation>
    </message>
    <message>
        <source>Pure FP16</source>
        <translation>纯 FP16</translation>
    </message>
    <message>
        <source>Pure BF16</source>
        <translation>纯 BF16</translation>
    </message>
    <message>
        <source>AMP (autocast FP16)</source>
        <translation>AMP（autocast FP16 自动混合精度）</translation>
    </message>
    <message>
        <source>AMP (autocast BF16)</source>
        <translation>AMP（autocast BF16 自动混合精度）</translation>
    </message>
    <message>
        <source>Mixed FP16 + FP32 master weights</source>
        <translation>混合 FP16 + FP32 主权重</translation>
    </message>
    <message>
        <source>Mixed BF16 + FP32 master weights</source>
        <translation>混合 BF16 + FP32 主权重</translation>
    </message>
    <message>
        <source>INT8 weights (inference)</source>
        <translation>INT8 权重（推理）</translation>
    </message>
    <message>
        <source>INT4 weights (inference)</source>
        <translation>INT4 权重（推理）</translation>
    </message>
    <message>
        <source>SGD</source>
        <translation>SGD（随机梯度下降）</translation>
    </message>
    <message>
        <source>SGD with momentum</source>
        <translation>带动量的 SGD</translation>
    </message>
    <message>
        <source>Adam</source>
        <translation>Adam</translation>
    </message>
    <message>
        <source>AdamW</source>
        <translation>AdamW</translation>
    </message>
    <message>
        <source>Adagrad</source>
        <translation>Adagrad</translation>
    </message>
    <message>
        <source>RMSprop</source>
        <translation>RMSprop</translation>
    </message>
    <message>
        <source>Adadelta</source>
        <translation>Adadelta</translation>
    </message>
    <message>
        <source>Lion</source>
        <translation>Lion</translation>
    </message>
    <message>
        <source>LAMB</source>
        <translation>LAMB</translation>
    </message>
    <message>
        <source>8-bit Adam</source>
        <translation>8 位 Adam</translation>
    </message>
    <message>
        <source>Adafactor</source>
        <translation>Adafactor</translation>
    </message>
    <message>
        <source>Paged AdamW (32-bit)</source>
        <translation>分页 AdamW（32 位）</translation>
    </message>
    <message>
        <source>Paged AdamW (8-bit)</source>
        <translation>分页 AdamW（8 位）</translation>
    </message>
    <message>
        <source>Custom</source>
        <translation>自定义</translation>
    </message>
    <message>
        <source>Single GPU</source>
        <translation>单 GPU</translation>
    </message>
    <message>
        <source>DDP (DistributedDataParallel)</source>
        <translation>DDP（分布式数据并行）</translation>
    </message>
    <message>
        <source>DataParallel</source>
        <translation>DataParallel（数据并行）</translation>
    </message>
    <message>
        <source>Balanced DataParallel</source>
        <translation>均衡 DataParallel（数据并行）</translation>
    </message>
    <message>
        <source>ZeRO-1</source>
        <translation>ZeRO-1</translation>
    </message>
    <message>
        <source>ZeRO-2</source>
        <translation>ZeRO-2</translation>
    </message>
    <message>
        <source>ZeRO-3</source>
        <translation>ZeRO-3</translation>
    </message>
    <message>
        <source>FSDP</source>
        <translation>FSDP（全分片数据并行）</translation>
    </message>
    <message>
        <source>FSDP NO_SHARD (not sharded)</source>
        <translation>FSDP NO_SHARD（不分片）</translation>
    </message>
    <message>
        <source>Exact (allocated peak)</source>
        <translation>精确（已分配峰值）</translation>
    </message>
    <message>
        <source>Caching allocator (reserved)</source>
        <translation>缓存分配器（已保留）</translation>
    </message>
    <message>
        <source>Expandable segments</source>
        <translation>可扩展段</translation>
    </message>
</context>
<context>
    <name>gui::BatchSweepChart</name>
    <message>
        <source>Needed</source>
        <translation>所需显存</translation>
    </message>
    <message>
        <source>Current batch</source>
        <translation>当前批大小</translation>
    </message>
    <message>
        <source>Batch size</source>
        <translation>批大小</translation>
    </message>
    <message>
        <source>GPU memory needed</source>
        <translation>所需 GPU 显存</translation>
    </message>
    <message>
        <source>max batch %1</source>
        <translation>最大批大小 %1</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
</context>
<context>
    <name>gui::BreakdownChart</name>
    <message>
        <source>GPU memory</source>
        <translation>GPU 显存</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>Gradients</source>
        <translation>梯度</translation>
    </message>
    <message>
        <source>Optimizer states</source>
        <translation>优化器状态</translation>
    </message>
    <message>
        <source>Activations</source>
        <translation>激活</translation>
    </message>
    <message>
        <source>Communication</source>
        <translation>通信</translation>
    </message>
    <message>
        <source>Other</source>
        <translation>其他</translation>
    </message>
    <message>
        <source>Allocator cache</source>
        <translation>分配器缓存</translation>
    </message>
    <message>
        <source>Workspace</source>
        <translation>工作区</translation>
    </message>
    <message>
        <source>CUDA context</source>
        <translation>CUDA 上下文</translation>
    </message>
    <message>
        <source>Master weights</source>
        <translation>主权重</translation>
    </message>
    <message>
        <source>GPU %1</source>
        <translation>%1 号 GPU</translation>
    </message>
    <message>
        <source>Need</source>
        <translation>所需</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message>
        <source>%1: %2 (%3 bytes), %4% of the need</source>
        <extracomment>%1 category, %2 bytes in units, %3 exact bytes, %4 share of the bar in percent</extracomment>
        <translation>%1：%2（%3 字节），占需求的 %4%</translation>
    </message>
    <message>
        <source>%1 %2</source>
        <extracomment>legend entry of the breakdown: %1 category, %2 its bytes
----------
one part of the need: %1 category, %2 its bytes</extracomment>
        <translation>%1 %2</translation>
    </message>
    <message>
        <source>Needs %1 of %2: %3.</source>
        <translation>需要 %1（容量 %2）：%3。</translation>
    </message>
    <message>
        <source>, </source>
        <translation>、</translation>
    </message>
    <message>
        <source>Needs %1: %2.</source>
        <extracomment>%1 the need, %2 the parts of the need</extracomment>
        <translation>需要 %1：%2。</translation>
    </message>
    <message>
        <source>Dequantized weight</source>
        <translation>反量化权重</translation>
    </message>
    <message>
        <source>Optimizer-step temporaries</source>
        <translation>优化器步骤的临时张量</translation>
    </message>
</context>
<context>
    <name>gui::Chart</name>
    <message>
        <source>Open an ONNX model (File &gt; Open, or drop one on the window) to see this chart.</source>
        <translation>打开一个 ONNX 模型（文件 &gt; 打开，或将其拖到窗口上）以查看此图表。</translation>
    </message>
    <message>
        <source>Save Chart As…</source>
        <translation>图表另存为…</translation>
    </message>
    <message>
        <source>%1 files (*.%2)</source>
        <translation>%1 文件 (*.%2)</translation>
    </message>
    <message>
        <source>Save chart</source>
        <translation>保存图表</translation>
    </message>
    <message>
        <source>%1: unknown image format (use %2)</source>
        <translation>%1：未知的图像格式（请使用 %2）</translation>
    </message>
    <message>
        <source>%1: cannot write the chart</source>
        <translation>%1：无法写入图表</translation>
    </message>
</context>
<context>
    <name>gui::CheckpointChart</name>
    <message>
        <source>Peak</source>
        <translation>峰值</translation>
    </message>
    <message>
        <source>Best</source>
        <translation>最佳</translation>
    </message>
    <message>
        <source>Extra forward MACs</source>
        <translation>额外前向乘加次数</translation>
    </message>
    <message>
        <source>Recompute</source>
        <translation>重计算</translation>
    </message>
    <message>
        <source>Checkpoint segments</source>
        <translation>检查点分段数</translation>
    </message>
    <message numerus="yes">
        <source>Best: %n segment(s)</source>
        <translation>
            <numerusform>最佳：%n 段</numerusform>
        </translation>
    </message>
</context>
<context>
    <name>gui::ControlsPanel</name>
    <message>
        <source>Use best</source>
        <translation>使用最佳值</translation>
    </message>
    <message>
        <source>Inplace activations</source>
        <translation>原地激活</translation>
    </message>
    <message>
        <source>Sizes</source>
        <translation>尺寸</translation>
    </message>
    <message>
        <source>Training</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>Precision:</source>
        <translation>精度：</translation>
    </message>
    <message>
        <source>Optimizer:</source>
        <translation>优化器：</translation>
    </message>
    <message>
        <source>Loss:</source>
        <translation>损失函数：</translation>
    </message>
    <message>
        <source>Checkpoint segments:</source>
        <translation>检查点分段数：</translation>
    </message>
    <message>
        <source>Gradient accumulation:</source>
        <translation>梯度累积：</translation>
    </message>
    <message>
        <source>Attention:</source>
        <translation>注意力：</translation>
    </message>
    <message>
        <source>How attention runs, as Hugging Face&apos;s attn_implementation names it. SDPA: PyTorch 2&apos;s scaled_dot_product_attention picks flash, memory-efficient or math by dtype, head size and mask; only math keeps the [batch, heads, seq, seq] matrix. Eager: written out with matmul and softmax. Flash Attention 2: 16-bit only, casts fp32 inputs. Flex: flex_attention with a block mask.</source>
        <translation>注意力的运行方式，按 Hugging Face 的 attn_implementation 命名。SDPA：PyTorch 2 的 scaled_dot_product_attention 按数据类型、头维度和掩码选择 flash、memory-efficient 或 math 内核；只有 math 保存 [batch, heads, seq, seq] 矩阵。Eager：用 matmul 和 softmax 显式写出。Flash Attention 2：仅支持 16 位，会转换 fp32 输入。Flex：带块掩码的 flex_attention。</translation>
    </message>
    <message>
        <source>SDPA (fused kernels)</source>
        <translation>SDPA（融合内核）</translation>
    </message>
    <message>
        <source>Eager (matmul + softmax)</source>
        <translation>即时执行（matmul + softmax）</translation>
    </message>
    <message>
        <source>Flash Attention 2</source>
        <translation>Flash Attention 2 注意力</translation>
    </message>
    <message>
        <source>Flex attention</source>
        <translation>Flex 注意力</translation>
    </message>
    <message>
        <source>Target</source>
        <translation>目标</translation>
    </message>
    <message>
        <source>GPU:</source>
        <translation>GPU：</translation>
    </message>
    <message>
        <source>Capacity:</source>
        <translation>容量：</translation>
    </message>
    <message>
        <source>Units:</source>
        <translation>单位：</translation>
    </message>
    <message>
        <source>off</source>
        <translation>关闭</translation>
    </message>
    <message>
        <source>torch.utils.checkpoint_sequential segments: fewer saved activations, more recomputation.</source>
        <translation>torch.utils.checkpoint_sequential 分段：保存的激活更少，重计算更多。</translation>
    </message>
    <message>
        <source>Micro-batches per optimizer step: activations at batch / steps, gradients persist.</source>
        <translation>每个优化器步骤的微批次数：激活按 批大小 / 步数 计算，梯度保留。</translation>
    </message>
    <message>
        <source>ReLU(inplace=True) and friends: changes the transient peak, not what is saved for backward.</source>
        <translation>ReLU(inplace=True) 等原地操作：改变临时峰值，而不改变为反向传播保存的内容。</translation>
    </message>
    <message>
        <source> GiB</source>
        <translation> GiB</translation>
    </message>
    <message>
        <source>Cross-entropy</source>
        <translation>交叉熵</translation>
    </message>
    <message>
        <source>Mean squared error</source>
        <translation>均方误差</translation>
    </message>
    <message>
        <source>None (the graph computes it)</source>
        <translation>无（计算图自带损失）</translation>
    </message>
    <message>
        <source>Chunked cross-entropy (torchtune)</source>
        <translation>分块交叉熵（torchtune）</translation>
    </message>
    <message>
        <source>Fused linear cross-entropy (Liger)</source>
        <translation>融合线性交叉熵（Liger）</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>Custom capacity</source>
        <translation>自定义容量</translation>
    </message>
    <message>
        <source>IEC (KiB, MiB, GiB)</source>
        <translation>IEC 二进制（KiB、MiB、GiB）</translation>
    </message>
    <message>
        <source>SI (kB, MB, GB)</source>
        <translation>SI 十进制（kB、MB、GB）</translation>
    </message>
    <message>
        <source>%1:</source>
        <translation>%1：</translation>
    </message>
    <message>
        <source>This model has fixed input sizes.</source>
        <translation>此模型的输入尺寸是固定的。</translation>
    </message>
    <message>
        <source>best: %1</source>
        <translation>最佳：%1</translation>
    </message>
    <message>
        <source>CPU offload</source>
        <translation>CPU 卸载</translation>
    </message>
    <message>
        <source>GPUs:</source>
        <translation>GPU 数量：</translation>
    </message>
    <message>
        <source>GPU 0 batch:</source>
        <translation>GPU 0 批大小：</translation>
    </message>
    <message>
        <source>Allocator:</source>
        <translation>分配器：</translation>
    </message>
    <message>
        <source>Safety margin:</source>
        <translation>安全余量：</translation>
    </message>
    <message>
        <source>Number of GPUs the global batch is spread over.</source>
        <translation>全局批次分摊到的 GPU 数量。</translation>
    </message>
    <message>
        <source>How the GPUs share the work; the verdict is for the most loaded GPU.</source>
        <translation>各 GPU 如何分担工作；结论针对负载最重的 GPU。</translation>
    </message>
    <message>
        <source>auto</source>
        <translation>自动</translation>
    </message>
    <message>
        <source>Balanced DataParallel: samples GPU 0 processes (auto: the batch that evens the GPUs).</source>
        <translation>均衡 DataParallel：GPU 0 处理的样本数（自动：使各 GPU 均衡的批大小）。</translation>
    </message>
    <message>
        <source>ZeRO and FSDP: keep optimizer states (and ZeRO-3/FSDP parameters) in host memory.</source>
        <translation>ZeRO 与 FSDP：将优化器状态（以及 ZeRO-3/FSDP 的参数）保存在主机内存中。</translation>
    </message>
    <message>
        <source>What must fit: the exact allocated peak, or what PyTorch&apos;s caching allocator reserves.</source>
        <translation>需要容纳的量：精确的已分配峰值，或 PyTorch 缓存分配器保留的显存。</translation>
    </message>
    <message>
        <source> MiB</source>
        <translation> MiB</translation>
    </message>
    <message>
        <source>Memory kept free on each GPU (other processes, fragmentation you expect).</source>
        <translation>每个 GPU 上保留的空闲显存（供其他进程使用，或应对预期的碎片）。</translation>
    </message>
    <message>
        <source>Strategy</source>
        <translation>并行策略</translation>
    </message>
    <message>
        <source>Precision policy. Pure FP16/BF16: everything in 2 bytes. AMP (torch.autocast): FP32 weights, gradients and optimizer, 16-bit matmul/conv outputs. Mixed: 16-bit weights plus FP32 master copies.</source>
        <translation>精度策略。纯 FP16/BF16：全部为 2 字节。AMP（torch.autocast）：FP32 权重、梯度和优化器，矩阵乘/卷积输出为 16 位。混合精度：16 位权重加 FP32 主权重副本。</translation>
    </message>
    <message>
        <source>Optimizer states per trainable parameter: SGD none, momentum 4 bytes, Adam/AdamW 8 bytes (two FP32 moments), 8-bit Adam 2 bytes. Paged AdamW (bitsandbytes) keeps the state of large tensors in unified memory that can move to the host: shown beside the peak, not in it.</source>
        <translation>每个可训练参数的优化器状态：SGD 无，动量 4 字节，Adam/AdamW 8 字节（两个 FP32 矩），8 位 Adam 2 字节。分页 AdamW（bitsandbytes）把大张量的状态放在可迁移到主机的统一内存中：显示在峰值旁边，不计入峰值。</translation>
    </message>
    <message>
        <source>Loss on the first output: cross-entropy keeps the log-probabilities for backward (large for language models); None when the graph computes its own loss. Chunked: torchtune&apos;s CEWithChunkedOutputLoss. Fused linear: Liger&apos;s kernel, which never makes the logits.</source>
        <translation>作用于第一个输出的损失：交叉熵为反向传播保留对数概率（语言模型中很大）；若计算图自行计算损失则选“无”。分块：torchtune 的 CEWithChunkedOutputLoss。融合线性：Liger 的内核，从不生成完整的 logits。</translation>
    </message>
    <message>
        <source>Memory of a GPU not in the list, in GiB.</source>
        <translation>列表中没有的 GPU 的显存，单位 GiB。</translation>
    </message>
    <message>
        <source>IEC units (1 GiB = 1024³ bytes, what PyTorch and nvidia-smi show) or SI units (1 GB = 10⁹ bytes).</source>
        <translation>IEC 单位（1 GiB = 1024³ 字节，PyTorch 和 nvidia-smi 所用）或 SI 单位（1 GB = 10⁹ 字节）。</translation>
    </message>
    <message>
        <source>Sequence length</source>
        <translation>序列长度</translation>
    </message>
    <message>
        <source>Image height</source>
        <translation>图像高度</translation>
    </message>
    <message>
        <source>Image width</source>
        <translation>图像宽度</translation>
    </message>
    <message>
        <source>Channels</source>
        <translation>通道数</translation>
    </message>
    <message>
        <source>Batch size</source>
        <translation>批大小</translation>
    </message>
    <message>
        <source>Samples per step. Drag it to see where the model stops fitting. (Input size &apos;%1&apos; in the file.)</source>
        <translation>每步的样本数。拖动它可查看模型从何处开始放不下。（文件中的输入尺寸“%1”。）</translation>
    </message>
    <message>
        <source>%1 of the model&apos;s input. Drag it to see how memory grows with it. (Input size &apos;%2&apos; in the file.)</source>
        <translation>模型输入的%1。拖动它可查看显存如何随之增长。（文件中的输入尺寸“%2”。）</translation>
    </message>
    <message>
        <source>The GPU the verdict is for. Every preset&apos;s capacity is the device total PyTorch reports (torch.cuda.mem_get_info, the &quot;total capacity&quot; of its out-of-memory message), a few hundred MiB below nvidia-smi&apos;s; the CUDA context comes off it.</source>
        <translation>结论所针对的 GPU。每个预设的容量均为 PyTorch 报告的设备总量（torch.cuda.mem_get_info，即其显存不足消息中的“total capacity”），比 nvidia-smi 显示的少几百 MiB；CUDA 上下文从中扣除。</translation>
    </message>
    <message>
        <source>Framework:</source>
        <translation>训练框架：</translation>
    </message>
    <message>
        <source>Hugging Face Trainer / PEFT</source>
        <translation>Hugging Face Trainer / PEFT</translation>
    </message>
    <message>
        <source>torchtune</source>
        <translation>torchtune</translation>
    </message>
    <message>
        <source>litgpt</source>
        <translation>litgpt</translation>
    </message>
    <message>
        <source>Chunked cross-entropy, 16-bit (litgpt)</source>
        <translation>分块交叉熵，16 位（litgpt）</translation>
    </message>
    <message>
        <source>Sets the switches the framework&apos;s recipes use; change any of them afterwards. Hugging Face: none. torchtune: bf16, AdamW, chunked cross-entropy, a checkpoint per layer, bf16 adapters, NF4 with quantized scales. litgpt: bf16, AdamW (paged with 4-bit weights), 16-bit chunked cross-entropy, no checkpointing, bf16 adapters.</source>
        <translation>按该框架配方的设置填入各开关，之后仍可逐项修改。Hugging Face：不改动。torchtune：bf16、AdamW、分块交叉熵、每层一个检查点、bf16 适配器、缩放因子也量化的 NF4。litgpt：bf16、AdamW（4 位权重时为分页 AdamW）、16 位分块交叉熵、不做检查点、bf16 适配器。</translation>
    </message>
    <message>
        <source>Offload activations to the host</source>
        <translation>将激活卸载到主机内存</translation>
    </message>
    <message>
        <source>torchtune&apos;s enable_activation_offloading: each checkpointed layer&apos;s input goes to pinned host memory after its forward and comes back when the layer is recomputed. Needs checkpointing, as torchtune&apos;s recipes do; the host memory is shown beside the peak, not in it.</source>
        <translation>torchtune 的 enable_activation_offloading：每个做检查点的层的输入在其前向之后移到锁页主机内存，在该层重算时再取回。与 torchtune 的配方一样需要开启检查点；主机内存显示在峰值旁，不计入峰值。</translation>
    </message>
    <message>
        <source>Padded batches: the length varies up to this</source>
        <translation>按批填充：长度逐步变化，最长到此值</translation>
    </message>
    <message>
        <source>Each batch is padded to its longest sample, so the sequence length changes from step to step up to the value above. The allocator keeps the memory every length reserved: the reserved peak is the highest of those steps. The verdict stays the longest step&apos;s, since the allocator gives its cache back before it runs out.</source>
        <translation>每个批次都填充到其中最长的样本，因此序列长度逐步变化，最长到上面的值。分配器保留每种长度预留过的内存：预留峰值取这些步中最高的一个。是否放得下仍按最长的一步判断，因为分配器在内存耗尽之前会先交还其缓存。</translation>
    </message>
    <message>
        <source>transformers &lt; 4.46 (fp32 logits)</source>
        <translation>4.46 之前的 transformers（fp32 logits）</translation>
    </message>
    <message>
        <source>Training loop:</source>
        <translation>训练循环：</translation>
    </message>
    <message>
        <source>What the training loop holds while backward runs. Hugging Face Trainer returns the loss alone, so the model&apos;s output goes before backward. A custom loop (output = model(...); loss.backward(); optimizer.step()) keeps the output&apos;s logits to the end of the step.</source>
        <translation>反向传播期间训练循环持有什么。Hugging Face Trainer 只返回损失，因此模型输出在反向传播之前就释放。自定义循环（output = model(...); loss.backward(); optimizer.step()）会把输出的 logits 一直保留到该步结束。</translation>
    </message>
    <message>
        <source>Before transformers 4.46 a causal language model trained with labels returned its logits in fp32 and took the loss on a second, shifted fp32 copy: at a large vocabulary that is gigabytes more at the loss, and more still when the loop keeps the output.</source>
        <translation>在 transformers 4.46 之前，带标签训练的因果语言模型以 fp32 返回 logits，并在第二份移位后的 fp32 副本上计算损失：词表很大时，损失处要多出数 GB；若循环还保留输出，则更多。</translation>
    </message>
    <message>
        <source>HF Trainer (drops outputs)</source>
        <translation>HF Trainer（释放输出）</translation>
    </message>
    <message>
        <source>Custom (keeps outputs)</source>
        <translation>自定义（保留输出）</translation>
    </message>
    <message>
        <source>Inference</source>
        <translation>推理</translation>
    </message>
</context>
<context>
    <name>gui::FineTunePanel</name>
    <message>
        <source>Fine-tuning</source>
        <translation>微调</translation>
    </message>
    <message>
        <source>Double quantization</source>
        <translation>双重量化</translation>
    </message>
    <message>
        <source>Prepare for k-bit training</source>
        <translation>为 k 位训练做准备</translation>
    </message>
    <message>
        <source>Checkpoint every decoder layer</source>
        <translation>每个解码层设检查点</translation>
    </message>
    <message>
        <source>PEFT defaults</source>
        <translation>PEFT 默认值</translation>
    </message>
    <message>
        <source>QLoRA paper</source>
        <translation>QLoRA 论文设置</translation>
    </message>
    <message>
        <source>Full fine-tuning</source>
        <translation>全量微调</translation>
    </message>
    <message>
        <source>LoRA</source>
        <translation>LoRA（低秩适配）</translation>
    </message>
    <message>
        <source>QLoRA</source>
        <translation>QLoRA（量化低秩适配）</translation>
    </message>
    <message>
        <source>NF4 (4-bit)</source>
        <translation>NF4（4 位）</translation>
    </message>
    <message>
        <source>FP4 (4-bit)</source>
        <translation>FP4（4 位）</translation>
    </message>
    <message>
        <source>INT8 (LLM.int8)</source>
        <translation>INT8（LLM.int8，8 位）</translation>
    </message>
    <message>
        <source>Method:</source>
        <translation>方法：</translation>
    </message>
    <message>
        <source>Recipe:</source>
        <translation>预设：</translation>
    </message>
    <message>
        <source>alpha</source>
        <translation>alpha 系数</translation>
    </message>
    <message>
        <source>Rank:</source>
        <translation>秩：</translation>
    </message>
    <message>
        <source>Dropout:</source>
        <translation>Dropout 比例：</translation>
    </message>
    <message>
        <source>Targets:</source>
        <translation>目标模块：</translation>
    </message>
    <message>
        <source>Adapter weights:</source>
        <translation>适配器权重：</translation>
    </message>
    <message>
        <source>Quantization:</source>
        <translation>量化：</translation>
    </message>
    <message>
        <source>Compute dtype:</source>
        <translation>计算数据类型：</translation>
    </message>
    <message>
        <source>Full: every parameter trains (gradients and optimizer state for all). LoRA: the model is frozen and small adapter matrices train beside the chosen layers. QLoRA: LoRA on a model whose linear layers are stored in 4 or 8 bits.</source>
        <translation>全量：所有参数都参与训练（全部参数都有梯度和优化器状态）。LoRA：模型被冻结，只训练挂在所选层旁的小型适配器矩阵。QLoRA：在线性层以 4 位或 8 位存储的模型上做 LoRA。</translation>
    </message>
    <message>
        <source>PEFT&apos;s LoraConfig() defaults: rank 8, alpha 8, no dropout, the model&apos;s default layers (q_proj and v_proj for Llama-style models).</source>
        <translation>PEFT 的 LoraConfig() 默认值：秩 8，alpha 8，无 dropout，作用于该模型的默认层（Llama 类模型为 q_proj 和 v_proj）。</translation>
    </message>
    <message>
        <source>The QLoRA paper&apos;s setup: NF4 with double quantization, BF16 compute, rank 64, alpha 16, dropout 0.1 on every linear layer, paged 32-bit AdamW and a checkpoint per decoder layer.</source>
        <translation>QLoRA 论文的设置：NF4 加双重量化，BF16 计算，秩 64，alpha 16，dropout 0.1，作用于所有线性层，分页 32 位 AdamW，每个解码层一个检查点。</translation>
    </message>
    <message>
        <source>LoRA rank r: each adapted layer gets r × (inputs + outputs) trainable parameters. Changing it reloads the model.</source>
        <translation>LoRA 秩 r：每个加了适配器的层获得 r × (输入 + 输出) 个可训练参数。修改它会重新加载模型。</translation>
    </message>
    <message>
        <source>LoRA alpha: scales the adapters&apos; output by alpha / r. It changes no memory.</source>
        <translation>LoRA alpha：把适配器的输出乘以 alpha / r。它不影响显存。</translation>
    </message>
    <message>
        <source>Dropout in front of each adapter: above 0 every adapter keeps its own dropped copy of its input and a 1-byte mask for backward.</source>
        <translation>每个适配器前的 dropout：大于 0 时，每个适配器都为反向传播保留一份自己的经 dropout 的输入副本和 1 字节的掩码。</translation>
    </message>
    <message>
        <source>Layers that get adapters, by module name, comma separated (q_proj, v_proj), or all-linear for every linear layer but the output layer. Empty: PEFT&apos;s default for the model type (a config.json only; an ONNX file needs names here).</source>
        <translation>要加适配器的层，按模块名填写，用逗号分隔（q_proj, v_proj），或填 all-linear 表示除输出层外的所有线性层。留空：使用 PEFT 针对该模型类型的默认值（仅限 config.json；ONNX 文件需要在此填写名称）。</translation>
    </message>
    <message>
        <source>The adapters&apos; weights, gradients and optimizer state. FP32 is PEFT&apos;s default, also on a 16-bit model, where each adapted layer then makes an FP32 copy of its input for backward; BF16/FP16 adapters (autocast_adapter_dtype=False) need no copy. Changing it reloads the model.</source>
        <translation>适配器的权重、梯度和优化器状态所用的精度。FP32 是 PEFT 的默认值，在 16 位模型上也是如此，此时每个加了适配器的层都会为反向传播保存一份 FP32 的输入副本；BF16/FP16 适配器（autocast_adapter_dtype=False）不需要这份副本。更改后会重新加载模型。</translation>
    </message>
    <message>
        <source>bitsandbytes storage of the frozen linear layers: NF4/FP4 about half a byte per weight plus a scale per 64 weights; INT8 one byte per weight plus a scale per row.</source>
        <translation>冻结线性层的 bitsandbytes 存储方式：NF4/FP4 每个权重约半个字节，外加每 64 个权重一个缩放值；INT8 每个权重一个字节，外加每行一个缩放值。</translation>
    </message>
    <message>
        <source>Quantize the 4-bit scales too: about 0.52 instead of 0.56 bytes per weight.</source>
        <translation>把 4 位量化的缩放值也量化：每个权重约 0.52 字节，而不是 0.56 字节。</translation>
    </message>
    <message>
        <source>Each 4-bit layer unpacks its whole weight into this dtype while it runs; the largest such copy counts at the peak.</source>
        <translation>每个 4 位层运行时都会把整个权重解包为此数据类型；其中最大的一份副本计入峰值。</translation>
    </message>
    <message>
        <source>prepare_model_for_kbit_training: the weights that stay unquantized (embeddings, norms, output layer) are cast to FP32, 4 bytes each.</source>
        <translation>prepare_model_for_kbit_training：未量化的权重（嵌入层、归一化层、输出层）转换为 FP32，每个 4 字节。</translation>
    </message>
    <message>
        <source>Hugging Face gradient_checkpointing_enable(): every decoder layer keeps only its input, and its activations are rebuilt during backward. Replaces the checkpoint segments above.</source>
        <translation>Hugging Face gradient_checkpointing_enable()：每个解码层只保留其输入，其激活在反向传播时重新计算。取代上面的检查点分段。</translation>
    </message>
    <message>
        <source>DoRA (magnitude and direction)</source>
        <translation>DoRA（幅度与方向）</translation>
    </message>
    <message>
        <source>LoraConfig(use_dora=True): a trained magnitude per output of each adapted layer. Its forward keeps the base layer&apos;s output and the adapter&apos;s for backward, about two activations more per adapted layer. Changing it reloads the model.</source>
        <translation>LoraConfig(use_dora=True)：每个加了适配器的层的每个输出各有一个可训练的幅度。它的前向为反向传播保留基础层的输出和适配器的输出，每个适配层约多两个激活。更改它会重新加载模型。</translation>
    </message>
    <message>
        <source>IA3</source>
        <extracomment>PEFT&apos;s IA3 method: trained vectors scale some layers&apos; outputs (or inputs)</extracomment>
        <translation>IA3（向量缩放）</translation>
    </message>
    <message>
        <source>default (%1)</source>
        <extracomment>placeholder of the targets field: empty means PEFT&apos;s default modules for the model type, listed</extracomment>
        <translation>默认（%1）</translation>
    </message>
    <message>
        <source>all-linear (PEFT has no default targets for %1)</source>
        <extracomment>placeholder of the LoRA targets field for a model type PEFT has no default targets for</extracomment>
        <translation>all-linear（PEFT 没有 %1 的默认目标模块）</translation>
    </message>
    <message>
        <source>module names (PEFT has no default for this model)</source>
        <extracomment>placeholder of the targets field when PEFT has no default for the model: the user must name them</extracomment>
        <translation>模块名（PEFT 没有该模型的默认值）</translation>
    </message>
</context>
<context>
    <name>gui::LayerTreeModel</name>
    <message>
        <source>%1 %</source>
        <translation>%1 %</translation>
    </message>
    <message>
        <source>Op</source>
        <translation>算子</translation>
    </message>
    <message>
        <source>Output shape</source>
        <translation>输出形状</translation>
    </message>
    <message>
        <source>Params</source>
        <translation>参数</translation>
    </message>
    <message>
        <source>Activations</source>
        <translation>激活</translation>
    </message>
    <message>
        <source>Module path from the node names. Tick a layer to freeze it: frozen parameters get no gradient or optimizer state.</source>
        <translation>根据节点名称得到的模块路径。勾选某层即可冻结它：被冻结的参数没有梯度和优化器状态。</translation>
    </message>
    <message>
        <source>ONNX operator of the graph node.</source>
        <translation>图节点的 ONNX 算子。</translation>
    </message>
    <message>
        <source>Output shape at the current symbol values.</source>
        <translation>当前符号取值下的输出形状。</translation>
    </message>
    <message>
        <source>Trainable parameter elements owned by the layer.</source>
        <translation>该层拥有的可训练参数元素个数。</translation>
    </message>
    <message>
        <source>Bytes of the layer&apos;s outputs at this configuration.</source>
        <translation>此配置下该层输出的字节数。</translation>
    </message>
    <message>
        <source>Bytes the layer keeps for the backward pass (shared tensors counted once).</source>
        <translation>该层为反向传播保留的字节数（共享张量只计一次）。</translation>
    </message>
    <message>
        <source>Share of the peak held by this layer&apos;s tensors that are live at the moment of peak.</source>
        <translation>该层在峰值时刻存活的张量占峰值的比例。</translation>
    </message>
    <message numerus="yes">
        <source>shape computations (%n nodes)</source>
        <translation>
            <numerusform>形状计算（%n 个节点）</numerusform>
        </translation>
    </message>
    <message>
        <source>The exporter&apos;s shape arithmetic (Shape, Gather, Concat, ... on shape-sized integers): no memory to speak of. View &gt; Show Shape Computations lists them in place.</source>
        <translation>导出器的形状运算（在形状大小的整数上进行的 Shape、Gather、Concat 等）：几乎不占显存。视图 &gt; 显示形状计算 可在原位置列出它们。</translation>
    </message>
    <message>
        <source>%1
Tick to freeze: its parameters get no gradient and no optimizer state (fine-tuning).</source>
        <translation>%1
勾选以冻结：其参数不产生梯度，也没有优化器状态（微调）。</translation>
    </message>
    <message>
        <source>Freeze · Layer</source>
        <translation>冻结 · 层</translation>
    </message>
    <message>
        <source>Saved</source>
        <translation>保存</translation>
    </message>
    <message>
        <source>Of peak</source>
        <translation>占峰值</translation>
    </message>
    <message>
        <source>shape computations (1 node)</source>
        <translation>形状计算（1 个节点）</translation>
    </message>
    <message>
        <source>attention mask (1 node)</source>
        <translation>注意力掩码（1 个节点）</translation>
    </message>
    <message numerus="yes">
        <source>attention mask (%n nodes)</source>
        <translation>
            <numerusform>注意力掩码（%n 个节点）</numerusform>
        </translation>
    </message>
    <message>
        <source>The attention mask (and position ids) the model&apos;s forward builds from the inputs alone before its first layer: no parameters; its [batch, 1, seq, seq] tensors grow with the square of the sequence.</source>
        <translation>模型前向在第一层之前仅由输入构建的注意力掩码（及位置编号）：没有参数；其 [batch, 1, seq, seq] 张量随序列长度的平方增长。</translation>
    </message>
</context>
<context>
    <name>gui::LayersPage</name>
    <message>
        <source>Show shape computations</source>
        <translation>显示形状计算</translation>
    </message>
    <message>
        <source>Filter by layer name or op (Ctrl+F)</source>
        <translation>按层名称或算子筛选（Ctrl+F）</translation>
    </message>
    <message>
        <source>Shows the layers whose name or operator contains this text, with their parents.</source>
        <translation>显示名称或算子包含此文本的层及其父层。</translation>
    </message>
    <message>
        <source>How many levels of the layer tree are open; the PDF report&apos;s layer table uses depth 3.</source>
        <translation>层树展开的层级数；PDF 报告的层表使用深度 3。</translation>
    </message>
    <message>
        <source>List the exporter&apos;s shape arithmetic (Shape, Gather, Concat, Unsqueeze, ... on shape-sized integers) in place instead of one folded row per layer.</source>
        <translation>在原位置列出导出器的形状运算（在形状大小的整数上进行的 Shape、Gather、Concat、Unsqueeze 等），而不是每层折叠为一行。</translation>
    </message>
    <message>
        <source>Depth:</source>
        <translation>深度：</translation>
    </message>
</context>
<context>
    <name>gui::LogSlider</name>
    <message>
        <source>max %1</source>
        <extracomment>beside a batch / sequence-length slider: the largest value that fits on the GPU</extracomment>
        <translation>最大 %1</translation>
    </message>
    <message>
        <source>Largest value that fits on the selected GPU: %1</source>
        <translation>所选 GPU 上能放下的最大值：%1</translation>
    </message>
</context>
<context>
    <name>gui::MainWindow</name>
    <message>
        <source>Headroom</source>
        <translation>Headroom 显存分析</translation>
    </message>
    <message>
        <source>Layers</source>
        <translation>层</translation>
    </message>
    <message>
        <source>Breakdown</source>
        <translation>分项</translation>
    </message>
    <message>
        <source>Timeline</source>
        <translation>时间线</translation>
    </message>
    <message>
        <source>Batch &amp;&amp; checkpoints</source>
        <translation>批大小与检查点</translation>
    </message>
    <message>
        <source>GPU probe</source>
        <translation>GPU 探针</translation>
    </message>
    <message>
        <source>Configuration</source>
        <translation>配置</translation>
    </message>
    <message>
        <source>Model</source>
        <translation>模型</translation>
    </message>
    <message>
        <source>Loading %1…</source>
        <translation>正在加载 %1…</translation>
    </message>
    <message>
        <source>Loading cancelled</source>
        <translation>已取消加载</translation>
    </message>
    <message>
        <source>&amp;File</source>
        <translation>文件(&amp;F)</translation>
    </message>
    <message>
        <source>&amp;Open…</source>
        <translation>打开(&amp;O)…</translation>
    </message>
    <message>
        <source>Open &amp;Recent</source>
        <translation>最近打开(&amp;R)</translation>
    </message>
    <message>
        <source>Open &amp;Sample Model</source>
        <translation>打开示例模型(&amp;S)</translation>
    </message>
    <message>
        <source>&amp;Quit</source>
        <translation>退出(&amp;Q)</translation>
    </message>
    <message>
        <source>&amp;View</source>
        <translation>视图(&amp;V)</translation>
    </message>
    <message>
        <source>Expand All Layers</source>
        <translation>展开所有层</translation>
    </message>
    <message>
        <source>Collapse All Layers</source>
        <translation>折叠所有层</translation>
    </message>
    <message>
        <source>&amp;Help</source>
        <translation>帮助(&amp;H)</translation>
    </message>
    <message>
        <source>&amp;About Headroom</source>
        <translation>关于 Headroom(&amp;A)</translation>
    </message>
    <message>
        <source>About Headroom</source>
        <translation>关于 Headroom</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>The bundled sample model (resnet18.onnx) was not found; open a model with File &gt; Open.</source>
        <translation>找不到自带的示例模型（resnet18.onnx）；请通过“文件 &gt; 打开”打开模型。</translation>
    </message>
    <message>
        <source>%1 — Headroom</source>
        <translation>%1 — Headroom 显存分析</translation>
    </message>
    <message>
        <source>Loaded %1</source>
        <translation>已加载 %1</translation>
    </message>
    <message>
        <source>Computing the batch sweep…</source>
        <translation>正在计算批大小扫描……</translation>
    </message>
    <message>
        <source>Cannot open the model</source>
        <translation>无法打开模型</translation>
    </message>
    <message numerus="yes">
        <source>Step %1 %2: %n activation tensor(s) live (%3), from %4 layer(s); selected in the Layers tab.</source>
        <translation>
            <numerusform>第 %1 步 %2：%n 个激活张量存活（%3），来自 %4 个层；已在“层”标签页中选中。</numerusform>
        </translation>
    </message>
    <message>
        <source>PDF files (*.pdf)</source>
        <translation>PDF 文件 (*.pdf)</translation>
    </message>
    <message>
        <source>&amp;Export</source>
        <translation>导出(&amp;E)</translation>
    </message>
    <message>
        <source>PDF &amp;Report…</source>
        <translation>PDF 报告(&amp;R)…</translation>
    </message>
    <message>
        <source>Layer Table as &amp;CSV…</source>
        <translation>层表导出为 &amp;CSV…</translation>
    </message>
    <message>
        <source>Report as &amp;JSON…</source>
        <translation>报告导出为 &amp;JSON…</translation>
    </message>
    <message>
        <source>&amp;Netron Attachment…</source>
        <translation>&amp;Netron 附件…</translation>
    </message>
    <message>
        <source>&amp;Edit</source>
        <translation>编辑(&amp;E)</translation>
    </message>
    <message>
        <source>&amp;Undo</source>
        <translation>撤销(&amp;U)</translation>
    </message>
    <message>
        <source>Take back the last change of the configuration</source>
        <translation>撤销对配置的上一次更改</translation>
    </message>
    <message>
        <source>&amp;Redo</source>
        <translation>重做(&amp;R)</translation>
    </message>
    <message>
        <source>&amp;Find Layer</source>
        <translation>查找层(&amp;F)</translation>
    </message>
    <message>
        <source>Show Shape Computations</source>
        <translation>显示形状计算</translation>
    </message>
    <message>
        <source>&amp;Documentation</source>
        <translation>文档(&amp;D)</translation>
    </message>
    <message>
        <source>What&apos;s &amp;This?</source>
        <translation>这是什么(&amp;T)？</translation>
    </message>
    <message>
        <source>&amp;Language</source>
        <translation>语言(&amp;L)</translation>
    </message>
    <message>
        <source>About &amp;Qt</source>
        <translation>关于 &amp;Qt</translation>
    </message>
    <message>
        <source>&lt;h3&gt;Headroom %1&lt;/h3&gt;&lt;p&gt;Will this model fit on my GPU, and where does the memory go? Headroom accounts for the memory an ONNX model needs for training or inference, as PyTorch would use it: weights, gradients, optimizer states, the activations autograd keeps, the caching allocator and the CUDA context, layer by layer.&lt;/p&gt;</source>
        <translation>&lt;h3&gt;Headroom %1&lt;/h3&gt;&lt;p&gt;这个模型能放进我的 GPU 吗？显存都用在哪里？Headroom 按 PyTorch 的使用方式逐层计算 ONNX 模型训练或推理所需的显存：权重、梯度、优化器状态、autograd 保留的激活、缓存分配器和 CUDA 上下文。&lt;/p&gt;</translation>
    </message>
    <message>
        <source>not installed</source>
        <translation>未安装</translation>
    </message>
    <message>
        <source>open</source>
        <translation>打开</translation>
    </message>
    <message>
        <source>The user guide (USER_GUIDE.md) is not installed; reinstall the headroom package.</source>
        <translation>用户指南（USER_GUIDE.md）未安装；请重新安装 headroom 软件包。</translation>
    </message>
    <message>
        <source>Headroom user guide</source>
        <translation>Headroom 用户指南</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>Configuration: %1 (Ctrl+Z undoes)</source>
        <translation>配置：%1（Ctrl+Z 撤销）</translation>
    </message>
    <message>
        <source>Open a model first.</source>
        <translation>请先打开一个模型。</translation>
    </message>
    <message>
        <source>%1: cannot write: %2</source>
        <translation>%1：无法写入：%2</translation>
    </message>
    <message>
        <source>CSV files (*.csv)</source>
        <translation>CSV 文件 (*.csv)</translation>
    </message>
    <message>
        <source>JSON files (*.json)</source>
        <translation>JSON 文件 (*.json)</translation>
    </message>
    <message>
        <source>Netron attachments (*.json)</source>
        <translation>Netron 附件 (*.json)</translation>
    </message>
    <message>
        <source>Export</source>
        <translation>导出</translation>
    </message>
    <message>
        <source>List every graph node (long: one row per node, shape computations included)</source>
        <translation>列出每个图节点（较长：每个节点一行，包括形状计算）</translation>
    </message>
    <message>
        <source>Wrote %1</source>
        <translation>已写入 %1</translation>
    </message>
    <message>
        <source>Cannot export</source>
        <translation>无法导出</translation>
    </message>
    <message>
        <source>GPU %1</source>
        <translation>显卡 %1</translation>
    </message>
    <message>
        <source>Open a model (ONNX or config.json)</source>
        <translation>打开模型（ONNX 或 config.json）</translation>
    </message>
    <message>
        <source>Models (*.onnx *.json);;ONNX (*.onnx);;config.json (*.json);;All files (*)</source>
        <translation>模型 (*.onnx *.json);;ONNX (*.onnx);;config.json (*.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>&lt;p&gt;Built with Qt %1 and QCustomPlot.&lt;/p&gt;&lt;p&gt;User guide: %2 (F1)&lt;/p&gt;</source>
        <translation>&lt;p&gt;基于 Qt %1 和 QCustomPlot 构建。&lt;/p&gt;&lt;p&gt;用户指南：%2（F1）&lt;/p&gt;</translation>
    </message>
    <message>
        <source>&lt;p&gt;Project and issues: &lt;a href=&quot;%1&quot;&gt;%1&lt;/a&gt; (&lt;a href=&quot;%1/issues&quot;&gt;report a problem&lt;/a&gt;)&lt;/p&gt;</source>
        <translation>&lt;p&gt;项目与问题：&lt;a href=&quot;%1&quot;&gt;%1&lt;/a&gt;（&lt;a href=&quot;%1/issues&quot;&gt;报告问题&lt;/a&gt;）&lt;/p&gt;</translation>
    </message>
    <message>
        <source>Serving</source>
        <translation>推理服务</translation>
    </message>
    <message>
        <source>Generation</source>
        <translation>生成</translation>
    </message>
    <message>
        <source>Layer filter cleared for the new model</source>
        <translation>已为新模型清除层过滤</translation>
    </message>
</context>
<context>
    <name>gui::ModelInfoPanel</name>
    <message>
        <source>File:</source>
        <translation>文件：</translation>
    </message>
    <message>
        <source>Producer:</source>
        <translation>生成工具：</translation>
    </message>
    <message>
        <source>Opset:</source>
        <translation>算子集：</translation>
    </message>
    <message>
        <source>Nodes:</source>
        <translation>节点：</translation>
    </message>
    <message>
        <source>Parameters:</source>
        <translation>参数：</translation>
    </message>
    <message>
        <source>Warnings:</source>
        <translation>警告：</translation>
    </message>
    <message>
        <source>%1
%2, SHA-256 %3</source>
        <translation>%1
%2，SHA-256 校验值 %3</translation>
    </message>
    <message>
        <source>unknown</source>
        <translation>未知</translation>
    </message>
    <message>
        <source>%1 %2</source>
        <translation>%1 %2</translation>
    </message>
    <message>
        <source>%1 (IR version %2)</source>
        <translation>%1（IR 版本 %2）</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>%1 trainable · %2 frozen · %3 total (%4), %5 buffers (%6)</source>
        <extracomment>%1 trainable parameters, %2 frozen, %3 all of them, %4 their bytes, %5 buffer elements, %6 their bytes</extracomment>
        <translation>%1 可训练 · %2 冻结 · 共 %3（%4），%5 个缓冲区元素（%6）</translation>
    </message>
    <message>
        <source>%1 total (%2), %3 buffers (%4)</source>
        <translation>共 %1（%2），%3 个缓冲区元素（%4）</translation>
    </message>
    <message>
        <source>%1 (architecture only: no weights, none needed)</source>
        <translation>%1（仅结构：不含权重，也不需要）</translation>
    </message>
</context>
<context>
    <name>gui::OverviewPage</name>
    <message>
        <source>Where the memory goes at the peak</source>
        <translation>峰值时显存用在哪里</translation>
    </message>
    <message>
        <source>Largest layers</source>
        <translation>最大的层</translation>
    </message>
    <message>
        <source>Per kind</source>
        <translation>按类型</translation>
    </message>
    <message>
        <source>Per layer</source>
        <translation>按层</translation>
    </message>
    <message>
        <source>One bar for a layer that repeats in every block, with its size per block and in all</source>
        <translation>每个块中重复的层合为一条，标出每块和合计的大小</translation>
    </message>
    <message>
        <source>One bar per graph node</source>
        <translation>每个图节点一条</translation>
    </message>
</context>
<context>
    <name>gui::ProbePage</name>
    <message>
        <source>Allocated peak</source>
        <translation>分配峰值</translation>
    </message>
    <message>
        <source>Reserved peak</source>
        <translation>保留峰值</translation>
    </message>
    <message>
        <source>Between steps</source>
        <translation>步与步之间</translation>
    </message>
    <message>
        <source>Outside the allocator</source>
        <translation>分配器之外</translation>
    </message>
    <message>
        <source>Load measurement…</source>
        <translation>加载实测数据…</translation>
    </message>
    <message>
        <source>Set a real run&apos;s figures beside the theory: gpu_truth.py JSON lines or a PyTorch memory snapshot saved as JSON</source>
        <translation>将真实运行的数据与理论值并列：gpu_truth.py 的 JSON 行，或保存为 JSON 的 PyTorch 显存快照</translation>
    </message>
    <message>
        <source>Error</source>
        <translation>误差</translation>
    </message>
    <message>
        <source>Open a model first.</source>
        <translation>请先打开一个模型。</translation>
    </message>
    <message>
        <source>Load measurement</source>
        <translation>加载实测数据</translation>
    </message>
    <message>
        <source>Measurements (*.jsonl *.json);;All files (*)</source>
        <translation>实测数据 (*.jsonl *.json);;所有文件 (*)</translation>
    </message>
    <message>
        <source>Measured (%1): %2</source>
        <translation>实测（%1）：%2</translation>
    </message>
    <message>
        <source>Could not use the measurement: %1</source>
        <translation>无法使用该实测数据：%1</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>Buffers</source>
        <translation>缓冲区</translation>
    </message>
    <message>
        <source>Gradients</source>
        <translation>梯度</translation>
    </message>
    <message>
        <source>Optimizer states</source>
        <translation>优化器状态</translation>
    </message>
    <message>
        <source>Master weights</source>
        <translation>主权重</translation>
    </message>
    <message>
        <source>Activations</source>
        <translation>激活</translation>
    </message>
    <message>
        <source>Workspace</source>
        <translation>工作区</translation>
    </message>
    <message>
        <source>CUDA context</source>
        <translation>CUDA 上下文</translation>
    </message>
    <message>
        <source>Input batch</source>
        <translation>输入批次</translation>
    </message>
    <message>
        <source>Loss</source>
        <translation>损失函数</translation>
    </message>
    <message>
        <source>Detect devices</source>
        <translation>检测设备</translation>
    </message>
    <message>
        <source>Run probe</source>
        <translation>运行探针</translation>
    </message>
    <message>
        <source>Cancel</source>
        <translation>取消</translation>
    </message>
    <message>
        <source>The CUDA device the probe replays the plan on</source>
        <translation>探针用来重放方案的 CUDA 设备</translation>
    </message>
    <message>
        <source>Ask headroom-probe which CUDA devices this machine has</source>
        <translation>询问 headroom-probe 本机有哪些 CUDA 设备</translation>
    </message>
    <message>
        <source> s</source>
        <translation> 秒</translation>
    </message>
    <message>
        <source>The probe is stopped after this long</source>
        <translation>超过此时长后停止探针</translation>
    </message>
    <message>
        <source>Replay this configuration&apos;s allocations on the GPU with real cudaMalloc calls</source>
        <translation>用真实的 cudaMalloc 调用在 GPU 上重放此配置的分配</translation>
    </message>
    <message>
        <source>Run the probe to measure this configuration on a real GPU.</source>
        <translation>运行探针，在真实 GPU 上测量此配置。</translation>
    </message>
    <message>
        <source>Quantity</source>
        <translation>指标</translation>
    </message>
    <message>
        <source>Theory</source>
        <translation>理论值</translation>
    </message>
    <message>
        <source>Measured</source>
        <translation>实测值</translation>
    </message>
    <message>
        <source>Difference</source>
        <translation>差值</translation>
    </message>
    <message>
        <source>Headroom&apos;s estimate for this configuration</source>
        <translation>Headroom 对此配置的估算</translation>
    </message>
    <message>
        <source>What the GPU reported (cudaMemGetInfo) while the probe replayed the plan</source>
        <translation>探针重放方案时 GPU 报告的数值（cudaMemGetInfo）</translation>
    </message>
    <message>
        <source>Measured minus theory</source>
        <translation>实测值减理论值</translation>
    </message>
    <message>
        <source>Allocation event</source>
        <translation>分配事件</translation>
    </message>
    <message>
        <source>Per category</source>
        <translation>按类别</translation>
    </message>
    <message>
        <source>Timeline</source>
        <translation>时间线</translation>
    </message>
    <message>
        <source>Device:</source>
        <translation>设备：</translation>
    </message>
    <message>
        <source>Time limit:</source>
        <translation>时间限制：</translation>
    </message>
    <message>
        <source>Looking for CUDA devices…</source>
        <translation>正在查找 CUDA 设备…</translation>
    </message>
    <message>
        <source>Preparing the plan…</source>
        <translation>正在准备方案…</translation>
    </message>
    <message>
        <source>Probe: %1</source>
        <translation>探针：%1</translation>
    </message>
    <message>
        <source>%1: %2</source>
        <translation>%1：%2</translation>
    </message>
    <message numerus="yes">
        <source>%n CUDA device(s) found.</source>
        <translation>
            <numerusform>找到 %n 个 CUDA 设备。</numerusform>
        </translation>
    </message>
    <message>
        <source>Does not fit on %1: out of memory during the replay (%2).</source>
        <translation>放不进 %1：重放过程中显存不足（%2）。</translation>
    </message>
    <message>
        <source>Measured on %1 in %2 s (%3).</source>
        <translation>在 %1 上测量，用时 %2 秒（%3）。</translation>
    </message>
    <message>
        <source>Probe unavailable: %1</source>
        <translation>探针不可用：%1</translation>
    </message>
    <message>
        <source>The probe crashed; the application is unaffected: %1</source>
        <translation>探针崩溃了，但应用程序不受影响：%1</translation>
    </message>
    <message>
        <source>The probe was stopped at the time limit: %1</source>
        <translation>探针达到时间限制后被停止：%1</translation>
    </message>
    <message>
        <source>Probe cancelled.</source>
        <translation>探针已取消。</translation>
    </message>
    <message>
        <source>The probe failed: %1</source>
        <translation>探针失败：%1</translation>
    </message>
    <message>
        <source>—</source>
        <translation>—</translation>
    </message>
    <message>
        <source>%1 % of theory</source>
        <translation>理论值的 %1 %</translation>
    </message>
    <message>
        <source>Measured as device memory used before and after the context was created (%1)</source>
        <translation>按创建上下文前后设备显存占用的差值测量（%1）</translation>
    </message>
    <message>
        <source>Workspace (cuBLAS + cuDNN)</source>
        <translation>工作区（cuBLAS + cuDNN）</translation>
    </message>
    <message>
        <source>cuBLAS: handle and workspace after the model&apos;s largest GEMMs; cuDNN: the preferred algorithms&apos; workspace for the model&apos;s convolutions</source>
        <translation>cuBLAS：执行模型最大的 GEMM 之后的句柄和工作区；cuDNN：模型卷积所用首选算法的工作区</translation>
    </message>
    <message>
        <source>Peak, exact allocations</source>
        <translation>峰值，精确分配</translation>
    </message>
    <message>
        <source>One cudaMalloc per tensor; measured: device memory above the baseline</source>
        <translation>每个张量一次 cudaMalloc；实测值：高出基线的设备显存</translation>
    </message>
    <message>
        <source>Peak, caching allocator</source>
        <translation>峰值，缓存分配器</translation>
    </message>
    <message>
        <source>Segments as PyTorch&apos;s caching allocator would reserve them</source>
        <translation>按 PyTorch 缓存分配器的方式保留段</translation>
    </message>
    <message>
        <source>Max batch</source>
        <translation>最大批大小</translation>
    </message>
    <message>
        <source>Theory: largest batch that fits the selected GPU; measured: bisection on this device</source>
        <translation>理论值：所选 GPU 能放下的最大批大小；实测值：在本设备上二分查找</translation>
    </message>
    <message>
        <source>Most bytes of this category live at once</source>
        <translation>该类别同时存活的最大字节数</translation>
    </message>
    <message>
        <source>at least %1</source>
        <translation>至少 %1</translation>
    </message>
    <message>
        <source>Max batch: measured %1, predicted %2</source>
        <translation>最大批大小：实测 %1，预测 %2</translation>
    </message>
    <message>
        <source>Max batch: measured %1</source>
        <translation>最大批大小：实测 %1</translation>
    </message>
    <message>
        <source>Max batch: predicted %1</source>
        <translation>最大批大小：预测 %1</translation>
    </message>
    <message>
        <source>Theory (allocated)</source>
        <translation>理论值（已分配）</translation>
    </message>
    <message>
        <source>Measured, exact</source>
        <translation>实测，精确</translation>
    </message>
    <message>
        <source>Measured, caching</source>
        <translation>实测，缓存</translation>
    </message>
    <message>
        <source>Run the probe to measure the CUDA context, the peak per category and the allocation timeline on this GPU; theory and measurement are then plotted side by side.</source>
        <translation>运行探针以在此 GPU 上测量 CUDA 上下文、各类别的峰值和分配时间线；随后理论值与实测值将并排绘制。</translation>
    </message>
    <message>
        <source>Default (not detected yet)</source>
        <translation>默认（尚未检测）</translation>
    </message>
    <message>
        <source>No CUDA device on this machine: the probe needs an NVIDIA GPU and its driver. The prediction does not need one.</source>
        <translation>本机没有 CUDA 设备：探针需要 NVIDIA GPU 及其驱动。预测不需要 GPU。</translation>
    </message>
</context>
<context>
    <name>gui::ScalingPage</name>
    <message>
        <source>Memory needed against the batch size</source>
        <translation>所需显存随批大小的变化</translation>
    </message>
    <message>
        <source>Peak and recomputation against checkpoint segments</source>
        <translation>峰值和重计算随检查点分段数的变化</translation>
    </message>
</context>
<context>
    <name>gui::ServingPage</name>
    <message>
        <source>vLLM %1</source>
        <translation>vLLM %1 引擎</translation>
    </message>
    <message>
        <source>Hugging Face generate()</source>
        <translation>Hugging Face generate() 生成</translation>
    </message>
    <message>
        <source>Model dtype (auto)</source>
        <translation>模型数据类型（自动）</translation>
    </message>
    <message>
        <source>fp8 (1 byte a value)</source>
        <translation>fp8（每个值 1 字节）</translation>
    </message>
    <message>
        <source>Dynamic (grows each step)</source>
        <translation>动态（每步增长）</translation>
    </message>
    <message>
        <source>Static (preallocated)</source>
        <translation>静态（预先分配）</translation>
    </message>
    <message>
        <source>Engine</source>
        <translation>引擎</translation>
    </message>
    <message>
        <source>GPU</source>
        <translation>显卡</translation>
    </message>
    <message>
        <source>Context length (tokens)</source>
        <translation>上下文长度（词元）</translation>
    </message>
    <message>
        <source>Tensor parallel (GPUs)</source>
        <translation>张量并行（显卡数）</translation>
    </message>
    <message>
        <source>KV cache dtype</source>
        <translation>KV 缓存数据类型</translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation>KV 缓存</translation>
    </message>
    <message>
        <source>New tokens</source>
        <translation>新生成词元数</translation>
    </message>
    <message>
        <source>Concurrent requests (max_num_seqs)</source>
        <translation>并发请求数（max_num_seqs）</translation>
    </message>
    <message>
        <source>Batch (sequences at once)</source>
        <translation>批大小（同时生成的序列数）</translation>
    </message>
</context>
<context>
    <name>gui::ServingState</name>
    <message>
        <source>Open a Hugging Face config.json to plan serving</source>
        <translation>打开 Hugging Face config.json 以规划推理服务</translation>
    </message>
    <message>
        <source>Cannot tell: %1 lacks %2</source>
        <translation>无法判断：%1 缺少 %2</translation>
    </message>
    <message>
        <source>Does not start on %1 (TP %2): %3</source>
        <translation>无法在 %1 上启动（张量并行 %2）：%3</translation>
    </message>
    <message>
        <source>Serves %1 concurrent %2-token requests on %3 (TP %4)</source>
        <translation>在 %3 上可同时服务 %1 个 %2 词元的请求（张量并行 %4）</translation>
    </message>
    <message>
        <source>%1, fewer than the %2 asked for: the others wait in vLLM&apos;s queue</source>
        <translation>%1，少于所要求的 %2 个：其余请求在 vLLM 的队列中等待</translation>
    </message>
    <message>
        <source>batch %1 of %2 + %3 tokens</source>
        <translation>批大小 %1，%2 + %3 个词元</translation>
    </message>
    <message>
        <source>generate() fits %1 on %2: peak %3 (max batch %4)</source>
        <translation>generate() 可在 %2 上运行 %1：峰值 %3（最大批大小 %4）</translation>
    </message>
    <message>
        <source>none</source>
        <translation>无</translation>
    </message>
    <message>
        <source>Longest context that starts: %1</source>
        <translation>可启动的最长上下文：%1</translation>
    </message>
    <message>
        <source>Longest prompt that fits: %1</source>
        <translation>可容纳的最长提示：%1</translation>
    </message>
    <message>
        <source>Weights</source>
        <translation>权重</translation>
    </message>
    <message>
        <source>Activation</source>
        <translation>激活</translation>
    </message>
    <message>
        <source>CUDA graphs</source>
        <translation>CUDA 图</translation>
    </message>
    <message>
        <source>KV cache</source>
        <translation>KV 缓存</translation>
    </message>
    <message>
        <source>Other (context, NCCL, workspaces)</source>
        <translation>其他（上下文、NCCL、工作区）</translation>
    </message>
    <message>
        <source>Unused</source>
        <translation>未使用</translation>
    </message>
    <message>
        <source>generate() does not fit %1 on %2: peak %3, %4 with the CUDA context, of %5 (max batch %6)</source>
        <extracomment>%1 batch and lengths, %2 GPU, %3 the peak, %4 it plus the CUDA context, %5 the device, %6 largest batch</extracomment>
        <translation>generate() 无法在 %2 上运行 %1：峰值 %3，加上 CUDA 上下文为 %4，设备容量 %5（最大批大小 %6）</translation>
    </message>
</context>
<context>
    <name>gui::TaskBar</name>
    <message>
        <source>Train</source>
        <translation>训练</translation>
    </message>
    <message>
        <source>Fine-tune</source>
        <translation>微调</translation>
    </message>
    <message>
        <source>Generate</source>
        <translation>生成</translation>
    </message>
    <message>
        <source>Serve</source>
        <translation>部署服务</translation>
    </message>
    <message>
        <source>Task:</source>
        <translation>任务：</translation>
    </message>
    <message>
        <source>Training from scratch: every weight trains; gradients, optimizer states and what backward keeps.</source>
        <translation>从头训练：所有权重都参与训练；包括梯度、优化器状态以及反向传播保留的张量。</translation>
    </message>
    <message>
        <source>Fine-tuning: full, LoRA, QLoRA or IA3, with the fine-tuning recipes.</source>
        <translation>微调：全量、LoRA、QLoRA 或 IA3，并提供微调配方。</translation>
    </message>
    <message>
        <source>Generation: an ONNX graph&apos;s forward pass at the sizes set; a Hugging Face config&apos;s generate() with its KV cache.</source>
        <translation>生成：ONNX 图按所设尺寸做一次前向计算；Hugging Face 配置则按 generate() 及其 KV 缓存计算。</translation>
    </message>
    <message>
        <source>Serving: vLLM&apos;s startup plan for a Hugging Face config (weights, profile peak, KV cache, concurrency).</source>
        <translation>部署服务：Hugging Face 配置在 vLLM 中的启动规划（权重、profile 峰值、KV 缓存、并发数）。</translation>
    </message>
    <message>
        <source>serving needs a Hugging Face config.json or checkpoint folder: vLLM plans its startup from the config, and an ONNX graph has none</source>
        <translation>部署服务需要 Hugging Face 的 config.json 或检查点文件夹：vLLM 依据配置规划启动，而 ONNX 图没有配置</translation>
    </message>
</context>
<context>
    <name>gui::TimelineChart</name>
    <message>
        <source>forward</source>
        <translation>前向</translation>
    </message>
    <message>
        <source>loss</source>
        <translation>损失</translation>
    </message>
    <message>
        <source>backward</source>
        <translation>反向</translation>
    </message>
    <message>
        <source>optimizer</source>
        <translation>优化器</translation>
    </message>
    <message>
        <source>recompute</source>
        <translation>重计算</translation>
    </message>
    <message>
        <source>Allocated</source>
        <translation>已分配</translation>
    </message>
    <message>
        <source>Step of one training iteration</source>
        <translation>一次训练迭代中的步骤</translation>
    </message>
    <message>
        <source>peak %1</source>
        <translation>峰值 %1</translation>
    </message>
    <message>
        <source>Highest within step</source>
        <translation>步内最高值</translation>
    </message>
</context>
<context>
    <name>gui::TimelinePage</name>
    <message>
        <source>Click the timeline to select the layers whose tensors are live at that step.</source>
        <translation>点击时间线，即可选中在该步骤有张量存活的层。</translation>
    </message>
</context>
<context>
    <name>gui::TopLayersChart</name>
    <message>
        <source>Saved for backward</source>
        <translation>为反向传播保存</translation>
    </message>
    <message>
        <source>Output bytes</source>
        <translation>输出字节数</translation>
    </message>
    <message>
        <source>%1 each, %2</source>
        <extracomment>beside a bar of repeated layers: %1 one layer&apos;s bytes, %2 all of them</extracomment>
        <translation>每层 %1，共 %2</translation>
    </message>
    <message>
        <source>up to %1 each, %2</source>
        <translation>每层至多 %1，共 %2</translation>
    </message>
    <message>
        <source>%1 × %2 layers</source>
        <extracomment>a bar of repeated layers: %1 the path with each block number as &quot;*&quot;, %2 how many blocks</extracomment>
        <translation>%1 × %2 层</translation>
    </message>
</context>
<context>
    <name>gui::VerdictBanner</name>
    <message>
        <source>QLoRA</source>
        <translation>QLoRA 微调</translation>
    </message>
    <message>
        <source>LoRA</source>
        <translation>LoRA 微调</translation>
    </message>
    <message>
        <source>%1: %2 trainable parameters · frozen base %3 · adapters %4 · adapter gradients %5 · optimizer state %6</source>
        <extracomment>%1 LoRA, QLoRA or IA3, %2 trainable parameters, %3..%6 bytes of the frozen base weights, the adapter weights, their gradients, their optimizer state</extracomment>
        <translation>%1：可训练参数 %2 · 冻结的基础权重 %3 · 适配器 %4 · 适配器梯度 %5 · 优化器状态 %6</translation>
    </message>
    <message>
        <source> · paged optimizer state %1 outside the peak</source>
        <extracomment>%1 bytes of a paged optimizer&apos;s state, kept in CUDA unified memory and not counted in the peak</extracomment>
        <translation> · 分页优化器状态 %1（不计入峰值）</translation>
    </message>
    <message>
        <source> (%1 of it paged, outside the peak)</source>
        <extracomment>follows the optimizer state: how much of it a paged optimizer keeps in CUDA unified memory</extracomment>
        <translation>（其中 %1 为分页内存，不计入峰值）</translation>
    </message>
    <message>
        <source> · dequantized weight %1</source>
        <extracomment>the largest 4-bit weight unpacked while its layer runs, counted at the peak</extracomment>
        <translation> · 反量化权重 %1</translation>
    </message>
    <message>
        <source>batch %1</source>
        <translation>批大小 %1</translation>
    </message>
    <message>
        <source>inplace activations</source>
        <translation>原地激活</translation>
    </message>
    <message>
        <source>GPU 0 batch %1</source>
        <translation>GPU 0 批大小 %1</translation>
    </message>
    <message>
        <source>%1 (%2)</source>
        <translation>%1（%2）</translation>
    </message>
    <message>
        <source>Fits on %1 — %2 headroom</source>
        <extracomment>%1 GPU, %2 free bytes left; no largest batch: the need stays under capacity up to the search limit</extracomment>
        <translation>可以放进 %1 — 剩余 %2</translation>
    </message>
    <message>
        <source>Cannot tell: 1 tensor of unknown size</source>
        <translation>无法判断：1 个张量大小未知</translation>
    </message>
    <message>
        <source>Cannot tell: %1 tensors of unknown size</source>
        <translation>无法判断：%1 个张量大小未知</translation>
    </message>
    <message>
        <source>Cannot tell: 1 tensor of unknown size, first at node %1</source>
        <extracomment>%1 is the layer path of the node that makes the first size unknown</extracomment>
        <translation>无法判断：1 个张量大小未知，位于节点 %1</translation>
    </message>
    <message>
        <source>Cannot tell: %1 tensors of unknown size, first at node %2</source>
        <extracomment>%1 number of tensors, %2 the layer path of the node that makes the first size unknown</extracomment>
        <translation>无法判断：%1 个张量大小未知，第一个位于节点 %2</translation>
    </message>
    <message>
        <source>Fits on %1 — %2 headroom, max batch %3</source>
        <extracomment>%1 GPU, %2 free bytes left, %3 largest batch that fits</extracomment>
        <translation>可以放进 %1 — 剩余 %2，最大批大小 %3</translation>
    </message>
    <message>
        <source>Does not fit on %1 — needs %2</source>
        <translation>放不进 %1 — 需要 %2</translation>
    </message>
    <message>
        <source>Open an ONNX model to see whether it fits.</source>
        <translation>打开一个 ONNX 模型，看看能否放得下。</translation>
    </message>
    <message>
        <source>; try %1</source>
        <translation>；可尝试 %1</translation>
    </message>
    <message>
        <source>; max batch %1</source>
        <translation>；最大批大小 %1</translation>
    </message>
    <message>
        <source>Does not fit on %1 × %2 — GPU %3 needs %4</source>
        <extracomment>%1 number of GPUs, %2 GPU, %3 index of the most loaded GPU, %4 bytes it needs</extracomment>
        <translation>无法放入 %1 × %2 — GPU %3 需要 %4</translation>
    </message>
    <message>
        <source>Fits on %1 × %2 — GPU %3, the most loaded, has %4 headroom, max global batch %5</source>
        <extracomment>%1 number of GPUs, %2 GPU, %3 index of the most loaded GPU, %4 free bytes left on it, %5 largest global batch that fits</extracomment>
        <translation>可放入 %1 × %2 — 负载最重的 GPU %3 仍有 %4 余量，最大全局批量 %5</translation>
    </message>
    <message>
        <source> · %1, %2</source>
        <translation> · %1，%2</translation>
    </message>
    <message>
        <source>Fits on %1 — %2 headroom, max batch %3 (%4 expected)</source>
        <extracomment>%1 GPU, %2 free bytes left, %3 largest batch that fits with the safety margin (docs/ACCURACY.md), %4 the largest the model itself gives</extracomment>
        <translation>可以放进 %1 — 剩余 %2，最大批大小 %3（预计 %4）</translation>
    </message>
    <message>
        <source> · offloaded activations %1 in host memory</source>
        <extracomment>%1 bytes of activations torchtune&apos;s offloading keeps in pinned host memory, not counted in the peak</extracomment>
        <translation> · 卸载的激活 %1 在主机内存中</translation>
    </message>
    <message>
        <source>Fits on %1 × %2 at capacity — the cache fills the card, given back and retried when an allocation fails, max global batch %3</source>
        <extracomment>%1 number of GPUs, %2 GPU, %3 largest global batch that fits; at capacity PyTorch gives its cache back and retries when an allocation fails, so the cache fills the card and no headroom is left</extracomment>
        <translation>可以放进 %1 × %2，但已满载 — 缓存占满整张卡，分配失败时释放缓存后重试，最大全局批大小 %3</translation>
    </message>
    <message>
        <source>Fits on %1 at capacity — the cache fills the card, given back and retried when an allocation fails, max batch %2</source>
        <extracomment>%1 GPU, %2 largest batch that fits; at capacity PyTorch gives its cache back and retries when an allocation fails, so the cache fills the card and no headroom is left</extracomment>
        <translation>可以放进 %1，但已满载 — 缓存占满整张卡，分配失败时释放缓存后重试，最大批大小 %2</translation>
    </message>
    <message>
        <source>IA3</source>
        <translation>IA3 微调</translation>
    </message>
    <message>
        <source>Does not start: %1</source>
        <extracomment>%1 why PEFT refuses the adapters, e.g. &quot;LoRA: no targets= given and PEFT has no default targets for ...&quot;</extracomment>
        <translation>无法启动：%1</translation>
    </message>
    <message>
        <source>%1 checkpoint segments</source>
        <translation>%1 个检查点分段</translation>
    </message>
    <message>
        <source>%1 gradient accumulation steps</source>
        <translation>%1 步梯度累积</translation>
    </message>
    <message>
        <source>freeze the first %1 of %2 blocks (%3)</source>
        <extracomment>%1 blocks frozen of %2 numbered blocks, %3 their names (&quot;layers.0 to layers.15&quot;)</extracomment>
        <translation>冻结 %2 个块中的前 %1 个（%3）</translation>
    </message>
    <message>
        <source>%1 (%2, fits)</source>
        <extracomment>%1 is a change such as &quot;bf16&quot;, %2 the memory it saves</extracomment>
        <translation>%1（%2，可以放下）</translation>
    </message>
    <message>
        <source>%1 (%2, still does not fit)</source>
        <translation>%1（%2，仍然放不下）</translation>
    </message>
</context>
<context>
    <name>main</name>
    <message>
        <source>Will this model fit on my GPU, and where does the memory go?</source>
        <translation>这个模型能放进我的 GPU 吗？显存都用在哪里？</translation>
    </message>
    <message>
        <source>User interface language (en, zh_CN).</source>
        <translation>用户界面语言（en、zh_CN）。</translation>
    </message>
    <message>
        <source>language</source>
        <translation>语言</translation>
    </message>
    <message>
        <source>Render the main window to a PNG file once the model is analysed, then quit.</source>
        <translation>模型分析完成后把主窗口渲染为 PNG 文件，然后退出。</translation>
    </message>
    <message>
        <source>file</source>
        <translation>文件</translation>
    </message>
    <message>
        <source>ONNX model to open (default: the bundled sample).</source>
        <translation>要打开的 ONNX 模型（默认：自带的示例）。</translation>
    </message>
    <message>
        <source>Batch size to start with.</source>
        <translation>启动时使用的批大小。</translation>
    </message>
    <message>
        <source>N</source>
        <translation>数量</translation>
    </message>
    <message>
        <source>Tab to show: layers, breakdown, timeline, scaling.</source>
        <translation>要显示的标签页：layers、breakdown、timeline、scaling。</translation>
    </message>
    <message>
        <source>name</source>
        <translation>名称</translation>
    </message>
</context>
</TS>
